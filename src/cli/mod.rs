//! The `tessel` subcommands.

pub mod backend;
pub mod bench;
pub mod check;
pub mod check_golden;
pub mod check_sequence;
pub mod common;
pub mod compare;
pub mod demo;
pub mod hip;
pub mod info;
pub mod picture;
pub mod replay;
pub mod scene;
pub mod soak;
pub mod tune_taau;
pub mod vulkan;
