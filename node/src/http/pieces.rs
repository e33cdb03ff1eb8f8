//! An answer's body as pieces sent in order: buffers (a cache's, shared,
//! never copied) and runs of the feed's packed packets, unpacked a packed
//! run (about 128 KiB of JSON) at a time as the connection takes them. So a listing of any size costs a
//! reader one slice of memory, not a copy of the listing, and its length,
//! digest and gzip encoding are computed over the same bytes it sends.

use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use hyper::body::{Frame, SizeHint};
use sha2::{Digest, Sha256};

use super::feed::Feed;
use crate::store::StoreError;

/// One piece of a body.
#[derive(Debug, Clone)]
pub enum Piece {
    /// Bytes sent as they are.
    Bytes(Bytes),
    /// Feed entries `range` (at least one), as JSON separated by commas.
    Packets(Arc<Feed>, Range<usize>),
}

impl Piece {
    fn len(&self) -> u64 {
        match self {
            Piece::Bytes(bytes) => bytes.len() as u64,
            Piece::Packets(feed, range) => feed.run_len(range) as u64,
        }
    }
}

/// A body: pieces in order, of a known total length. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct Pieces {
    items: Arc<[Piece]>,
    len: u64,
}

impl From<Bytes> for Pieces {
    fn from(bytes: Bytes) -> Self {
        Pieces::new(vec![Piece::Bytes(bytes)])
    }
}

impl Pieces {
    /// The body of `items` in order.
    pub fn new(items: Vec<Piece>) -> Self {
        let len = items.iter().map(Piece::len).sum();
        Pieces { items: items.into(), len }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// The pieces.
    #[cfg(test)]
    pub(super) fn items(&self) -> &[Piece] {
        &self.items
    }

    /// Hands every byte of the body to `sink`, in order, a slice at a time.
    pub fn visit(&self, mut sink: impl FnMut(&[u8])) -> Result<(), StoreError> {
        let mut slice = Vec::new();
        for item in self.items.iter() {
            match item {
                Piece::Bytes(bytes) => sink(bytes),
                Piece::Packets(feed, range) => {
                    let mut next = range.start;
                    while next < range.end {
                        slice.clear();
                        next = feed.unpack_run(range, next, &mut slice)?;
                        sink(&slice);
                    }
                }
            }
        }
        Ok(())
    }

    /// The lowercase hex SHA-256 of the body: what a signature over the
    /// answer covers (`SPEC.md` §10.1.6).
    pub fn digest(&self) -> Result<String, StoreError> {
        let mut hash = Sha256::new();
        self.visit(|bytes| hash.update(bytes))?;
        Ok(hex::encode(hash.finalize()))
    }

    /// The body as sent, with its length as Content-Length.
    pub fn body(&self) -> Body {
        Body::new(Stream { pieces: self.clone(), index: 0, next: None, remaining: self.len })
    }
}

/// A [`Pieces`] being sent.
struct Stream {
    pieces: Pieces,
    /// The piece being sent.
    index: usize,
    /// Within a [`Piece::Packets`], the next entry to send.
    next: Option<usize>,
    remaining: u64,
}

impl Stream {
    /// The next slice of the body, or `None` at its end.
    fn next_slice(&mut self) -> Result<Option<Bytes>, StoreError> {
        loop {
            let Some(item) = self.pieces.items.get(self.index) else { return Ok(None) };
            let slice = match item {
                Piece::Bytes(bytes) => {
                    self.index += 1;
                    bytes.clone()
                }
                Piece::Packets(feed, range) => {
                    let next = self.next.unwrap_or(range.start);
                    let mut slice = Vec::new();
                    let after = feed.unpack_run(range, next, &mut slice)?;
                    if after < range.end {
                        self.next = Some(after);
                    } else {
                        (self.index, self.next) = (self.index + 1, None);
                    }
                    Bytes::from(slice)
                }
            };
            if !slice.is_empty() {
                self.remaining -= slice.len() as u64;
                return Ok(Some(slice));
            }
        }
    }
}

impl hyper::body::Body for Stream {
    type Data = Bytes;
    type Error = StoreError;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StoreError>>> {
        // A packed run (about 128 KiB) is unpacked in a fraction of a
        // millisecond: no need to leave the async thread for it.
        Poll::Ready(self.get_mut().next_slice().transpose().map(|slice| slice.map(Frame::data)))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}
