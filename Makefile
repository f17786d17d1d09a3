# The README's two commands. Both run the idempotent set-up first.
.PHONY: setup demo test build

setup:
	bash scripts/setup.sh

build: setup
	cargo build --release

demo: build
	./target/release/tessel demo

test: setup
	cargo test --release --workspace
