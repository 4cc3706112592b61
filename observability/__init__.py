"""Operating figures: Prometheus metrics (`metrics`, served at /metrics by `exposition`) and OpenTelemetry traces
(`tracing`, off unless an OTLP endpoint is configured). `hooks` holds the one-line decorators the apps put on
their search, context, extraction and embedding code. The ground floor: it imports no project app, so every app
may call it."""
