"""tessel's PyTorch twin: the network and every stage of docs/NETWORK.md, the scene generator used for
training, training, export to the model package, golden vectors."""

# The shipped model package (model/src/lib.rs SHIPPED_MODEL names the same folder).
SHIPPED_MODEL = "models/tessel-v12"
