//! The gzip encoding of a cached body, kept as chunks of [`GZIP_CHUNK`]
//! bytes instead of one buffer: the encoding of a 100,000-skill listing
//! (about 20 MB) never reserves room for a guess of its size (a third of
//! the JSON, 80 MB, was reserved before), is never copied to grow, and is
//! sent chunk by chunk as a [`Pieces`] body, shared by every reader.

use std::io::{self, Write};

use axum::body::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

use super::pieces::{Piece, Pieces};
use crate::store::StoreError;

/// The bytes of one chunk of an encoding.
pub(super) const GZIP_CHUNK: usize = 256 << 10;

/// The gzip encoding (fast level: skill text compresses about 4:1 even
/// so, and it is made once per sequence number) of `body`, in chunks of
/// `chunk` bytes.
pub(super) fn gzip(body: &Pieces, chunk: usize) -> Result<Pieces, StoreError> {
    let mut encoder = GzEncoder::new(Chunks::new(chunk), Compression::fast());
    body.visit(|slice| encoder.write_all(slice).expect("writing to memory does not fail"))?;
    Ok(encoder.finish().expect("finishing into memory does not fail").into_pieces())
}

/// A sink that keeps what it is given in buffers of `chunk` bytes, each
/// allocated at that size and filled before the next is started.
struct Chunks {
    chunk: usize,
    full: Vec<Piece>,
    open: Vec<u8>,
}

impl Chunks {
    fn new(chunk: usize) -> Self {
        let chunk = chunk.max(1);
        Chunks { chunk, full: Vec::new(), open: Vec::with_capacity(chunk) }
    }

    /// The chunks in order, the last one at its size.
    fn into_pieces(mut self) -> Pieces {
        if !self.open.is_empty() {
            self.open.shrink_to_fit();
            self.full.push(Piece::Bytes(Bytes::from(self.open)));
        }
        Pieces::new(self.full)
    }
}

impl Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.open.len() == self.chunk {
            let full = std::mem::replace(&mut self.open, Vec::with_capacity(self.chunk));
            self.full.push(Piece::Bytes(Bytes::from(full)));
        }
        let n = buf.len().min(self.chunk - self.open.len());
        self.open.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn gunzip(pieces: &Pieces) -> Vec<u8> {
        let mut gz = Vec::new();
        pieces.visit(|b| gz.extend_from_slice(b)).unwrap();
        assert_eq!(gz.len() as u64, pieces.len());
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut out).unwrap();
        out
    }

    /// Every chunk's length, and whether it holds no more room than its bytes.
    fn chunks(pieces: &Pieces) -> Vec<usize> {
        pieces
            .items()
            .iter()
            .map(|p| match p {
                Piece::Bytes(b) => b.len(),
                Piece::Packets(..) => panic!("an encoding is bytes"),
            })
            .collect()
    }

    #[test]
    fn an_encoding_in_chunks_decodes_to_the_body_and_each_chunk_is_full_but_the_last() {
        // Pseudo-random text compresses little, so the encoding spans many chunks.
        let mut state = 7u64;
        let body: Vec<u8> = (0..200_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                b'a' + (state >> 59) as u8
            })
            .collect();
        let (head, tail) = body.split_at(70_001);
        let pieces = Pieces::new(vec![
            Piece::Bytes(Bytes::copy_from_slice(head)),
            Piece::Bytes(Bytes::copy_from_slice(tail)),
        ]);
        let chunk = 4096;
        let gz = gzip(&pieces, chunk).unwrap();
        assert_eq!(gunzip(&gz), body);
        let sizes = chunks(&gz);
        assert!(sizes.len() > 10, "{} chunks", sizes.len());
        let (last, full) = sizes.split_last().unwrap();
        assert!(full.iter().all(|&n| n == chunk), "every chunk but the last is full: {sizes:?}");
        assert!(*last > 0 && *last <= chunk);
        // The same encoding in one chunk: the bytes do not depend on the cut.
        let whole = gzip(&pieces, 1 << 20).unwrap();
        assert_eq!(chunks(&whole).len(), 1);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        gz.visit(|s| a.extend_from_slice(s)).unwrap();
        whole.visit(|s| b.extend_from_slice(s)).unwrap();
        assert_eq!(a, b, "chunked and whole encodings are byte-identical");
    }

    #[test]
    fn an_encoding_of_exactly_one_chunk_is_one_chunk_and_one_byte_more_is_two() {
        let body = Pieces::from(Bytes::from_static(b"{\"skills\":[]}"));
        let len = gzip(&body, 1 << 20).unwrap().len() as usize;
        assert_eq!(chunks(&gzip(&body, len).unwrap()), [len], "at the limit: one chunk");
        assert_eq!(chunks(&gzip(&body, len - 1).unwrap()), [len - 1, 1], "one over: two");
        assert_eq!(gunzip(&gzip(&body, 1).unwrap()), b"{\"skills\":[]}");
    }
}
