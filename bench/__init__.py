"""Benchmarks: build_context against LangChain's trim_messages, and the JSONL store."""
