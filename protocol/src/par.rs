//! Order-preserving parallel maps over the per-packet work of large updates,
//! on rayon's thread pool.
//!
//! Decoding and stages 1–4 of the merge look at one packet at a time and
//! dominate its cost (JSON, SHA-256, the safety scan, YAML), so a large
//! update is mapped in parallel; small inputs stay on the calling thread,
//! where starting the pool's work costs more than it saves.
//!
//! Build or buy: this module used to run its own scoped threads (a chunk per
//! core, or parts handed out one at a time). `benches/build_or_buy.rs`
//! measured them against rayon on the merge's work, both in one criterion
//! group, on 2026-11-25 (2 cores shared with other builds; `cargo bench -p
//! ecp-protocol --bench build_or_buy`, `par` group), ours vs rayon, two runs:
//! scanning 10,000 bodies 21.1 vs 20.6 ms and 7.9 vs 10.5 ms; decoding 10,000
//! packets 41.6 vs 39.8 ms and 22.3 vs 15.9 ms; hashing then scanning them in
//! two stages 36.8 vs 20.7 ms and 17.9 vs 19.3 ms; scanning them in parts
//! 12.2 vs 11.6 ms and 9.6 vs 11.5 ms. A tie within the noise, so the maps
//! are rayon's.
//!
//! The chunked maps ([`map_taken`], [`map_chunks`], [`concat`]) keep the
//! shape the merge's stages pass between them; rayon collects each map into
//! one vector in place, so there is a single chunk and nothing is copied.

use rayon::prelude::*;

/// Below this many items, the pool costs more than it saves.
const MIN_ITEMS_FOR_THREADS: usize = 256;
/// Never more parts' worth of threads than this, whatever the pool holds.
const MAX_THREADS: usize = 8;

/// Below this many bytes of input, threads cost more than they save.
const MIN_BYTES_PER_PART: usize = 128 * 1024;

/// How many threads to share `len` bytes of input: one per thread of the
/// pool, when each has enough bytes to be worth starting.
pub(crate) fn threads_for_bytes(len: usize) -> usize {
    rayon::current_num_threads().min(MAX_THREADS).min(len / MIN_BYTES_PER_PART).max(1)
}

/// `(0..parts).map(f).collect()`, on the pool unless `threads` is 1. Parts
/// are taken by whichever thread is free, so a slow thread takes fewer.
pub(crate) fn run_parts<R, F>(parts: usize, threads: usize, f: F) -> Vec<R>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    if threads <= 1 {
        return (0..parts).map(f).collect();
    }
    (0..parts).into_par_iter().map(&f).collect()
}

/// [`map_indexed`], its results as chunks for [`map_chunks`] and [`concat`].
pub(crate) fn map_taken<T, R, F>(items: Vec<T>, f: F) -> Vec<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    vec![map_indexed(items, f)]
}

/// `f` over every item of every chunk, in order; `f` gets the item's
/// position across all chunks.
pub(crate) fn map_chunks<T, R, F>(chunks: Vec<Vec<T>>, f: F) -> Vec<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let mut offset = 0;
    chunks
        .into_iter()
        .map(|chunk| {
            let start = offset;
            offset += chunk.len();
            map_indexed(chunk, |i, item| f(start + i, item))
        })
        .collect()
}

/// The chunks as one vector, in order; the first chunk's vector grows to hold them all.
pub(crate) fn concat<T>(chunks: Vec<Vec<T>>) -> Vec<T> {
    let total: usize = chunks.iter().map(Vec::len).sum();
    let mut chunks = chunks.into_iter();
    let mut out = chunks.next().unwrap_or_default();
    out.reserve_exact(total - out.len());
    for chunk in chunks {
        out.extend(chunk);
    }
    out
}

/// `items.into_iter().enumerate().map(f).collect()`, in parallel for large inputs.
pub(crate) fn map_indexed<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    if items.len() < MIN_ITEMS_FOR_THREADS {
        return items.into_iter().enumerate().map(|(i, item)| f(i, item)).collect();
    }
    items.into_par_iter().enumerate().map(|(i, item)| f(i, item)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_indices_for_large_and_small_inputs() {
        for n in [0, 1, 255, 256, 1000, 4097] {
            let items: Vec<usize> = (0..n).collect();
            let out = map_indexed(items, |i, x| (i, x * 2));
            assert_eq!(out.len(), n);
            assert!(out.iter().enumerate().all(|(pos, &(i, doubled))| pos == i && doubled == 2 * i));
        }
    }

    #[test]
    fn chunked_maps_keep_order_and_indices() {
        for n in [0, 1, 255, 256, 1000, 4097] {
            let items: Vec<usize> = (0..n).collect();
            let chunks = map_taken(items, |i, x| (i, x * 2));
            let chunks = map_chunks(chunks, |i, (j, doubled)| (i, j, doubled + 1));
            let out = concat(chunks);
            assert_eq!(out.len(), n);
            assert!(out.iter().enumerate().all(|(pos, &(i, j, v))| pos == i && pos == j && v == 2 * pos + 1));
        }
    }

    #[test]
    fn runs_every_part_once_in_order() {
        for (parts, threads) in [(0, 1), (1, 2), (2, 2), (5, 2), (17, 3), (3, 8)] {
            let out = run_parts(parts, threads, |part| part * 10);
            assert_eq!(out, (0..parts).map(|p| p * 10).collect::<Vec<_>>());
        }
    }

    #[test]
    fn small_inputs_get_one_thread() {
        assert_eq!(threads_for_bytes(0), 1);
        assert_eq!(threads_for_bytes(MIN_BYTES_PER_PART - 1), 1);
        assert!(threads_for_bytes(usize::MAX) <= MAX_THREADS);
    }
}
