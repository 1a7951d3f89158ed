"""Multi-hop question answering: Chain-of-RAG (`chain`), DeepSearch (`deep`), NaiveRAG (`naive`) and the
router that picks one (`router`), over any `retrieval.search.Retriever`. Entry point: `strategies.ask`.
Importing it changes nothing; import the submodules you need.
"""
