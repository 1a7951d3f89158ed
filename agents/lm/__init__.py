"""The language-model layer: typed steps (`steps`), the models that run them
(`chat.ChatModel`, `extractive.ExtractiveModel`, `models.RoleModels`), the text
toolkit extractive steps use (`nlp.TextToolkit`), and the cache, usage ledger and
settings around them. Importing it changes nothing; import the submodules you need.
"""
