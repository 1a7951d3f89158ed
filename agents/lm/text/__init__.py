"""The pieces behind `agents.lm.nlp.TextToolkit`: sentences, tokens, entities, vectors."""
