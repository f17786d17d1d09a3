//! Prints docs/KERNELS.md's table of kernel resources (`cargo run -p tessel-kernels --example
//! kernels_md`); a test checks that the file holds the current table.
fn main() {
    print!("{}", tessel_kernels::markdown_table());
}
