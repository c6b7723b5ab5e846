"""The one home of the HTTP API's request and response models, one module per domain."""
