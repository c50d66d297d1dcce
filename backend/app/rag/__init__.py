"""Retrieval: knowledge ingestion, local embeddings, the vector store and the retrieval engine."""
