"""Offline evaluations: retrieval quality on public BEIR sets and on the domain incident cases."""
