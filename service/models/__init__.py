"""HTTP request and response models of the API, one module per domain (the request wire models
shared with the SDK stay in ``memtrace_client.models``)."""
