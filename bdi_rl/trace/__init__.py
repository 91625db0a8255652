"""Traces: the event format (events), batches over XMPP (batch), the tracer (tracer)."""
