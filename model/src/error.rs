//! Errors of the model crate. Every error names the file and the field it is about, so that a
//! user can find the bad input without reading code.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input that exists but is wrong: a bad value, size, shape, hash or layout.
    #[error("{}: {field}: {msg}", file.display())]
    Invalid { file: PathBuf, field: String, msg: String },
    /// The file could not be read or written.
    #[error("{}: {source}", file.display())]
    Io { file: PathBuf, source: std::io::Error },
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(file: impl AsRef<Path>, field: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Invalid { file: file.as_ref().to_path_buf(), field: field.into(), msg: msg.into() }
    }
    pub fn io(file: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io { file: file.as_ref().to_path_buf(), source }
    }
}

/// Reads a whole file, naming it in the error.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Writes a file through a temporary name and a rename, so an existing file is never left half
/// written when something fails part way.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!(
        "{}.partial",
        path.extension().and_then(|e| e.to_str()).unwrap_or("tmp")
    ));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}
