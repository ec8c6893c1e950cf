//! Opening the byte stream under a trace: compression is recognised by its magic bytes,
//! whatever the file is called.

use std::io::{self, Cursor, Read};

/// How a trace file is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// Plain text.
    None,
    /// Zstandard (magic `28 b5 2f fd`; also when the file starts with a skippable frame).
    Zstd,
    /// Gzip (magic `1f 8b`); multi-member files are read to the end.
    Gzip,
}

impl Compression {
    /// Recognises the compression from the first bytes of a file (at most 4 are looked at).
    pub fn from_magic(head: &[u8]) -> Compression {
        match head {
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Compression::Zstd,
            [0x1f, 0x8b, ..] => Compression::Gzip,
            _ => Compression::None,
        }
    }

    /// `"none"`, `"zstd"` or `"gzip"`.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
        }
    }
}

/// Reads the magic bytes of `inner` and returns the decompressed stream.
pub(crate) fn open_stream<R: Read + Send + 'static>(
    mut inner: R,
) -> io::Result<(Compression, Box<dyn Read + Send>)> {
    let mut magic = [0u8; 4];
    let mut got = 0;
    while got < magic.len() {
        match inner.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let head = &magic[..got];
    let compression = Compression::from_magic(head);
    let whole = Cursor::new(head.to_vec()).chain(inner);
    let stream: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(whole),
        Compression::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(whole)?;
            // Accept frames made with `zstd --long` (windows up to 2 GiB).
            d.window_log_max(31)?;
            Box::new(d)
        }
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(whole)),
    };
    Ok((compression, stream))
}
