//! The `tessel` subcommands.

pub mod bench;
pub mod common;
pub mod compare;
pub mod demo;
pub mod info;
pub mod picture;
pub mod replay;
pub mod scene;
