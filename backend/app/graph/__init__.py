"""The LangGraph RCA workflow: state, nodes, prompts and the graph builder."""
