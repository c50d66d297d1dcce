"""RCA generators: the extractive default (no LLM) and the LLM-backed one."""
