//! Order-preserving parallel map over the per-packet work of large updates.
//!
//! Decoding and stages 1–4 of the merge look at one packet at a time and
//! dominate its cost (JSON, SHA-256, the safety scan, YAML), so a large
//! update is split into one contiguous chunk per core: the first chunk runs
//! on the calling thread, the others on scoped threads.
//! This is computation, not I/O: no thread outlives the call, and small
//! inputs stay on the calling thread.
//!
//! Between the parallel stages of a merge the chunks stay apart
//! ([`map_taken`], [`map_chunks`], [`concat`]): cutting a vector of 10,000
//! packets and joining the results each copy megabytes on the calling
//! thread, into memory the system has yet to hand over page by page.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Below this many items, threads cost more than they save.
const MIN_ITEMS_FOR_THREADS: usize = 256;
/// Never more threads than this, whatever the machine reports.
const MAX_THREADS: usize = 8;

fn threads_for(len: usize) -> usize {
    if len < MIN_ITEMS_FOR_THREADS {
        return 1;
    }
    let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    cores.min(MAX_THREADS).min(len / (MIN_ITEMS_FOR_THREADS / 2)).max(1)
}

/// Below this many bytes of input, threads cost more than they save.
const MIN_BYTES_PER_PART: usize = 128 * 1024;

/// How many threads to share `len` bytes of input: one per core, when each
/// has enough bytes to be worth starting.
pub(crate) fn threads_for_bytes(len: usize) -> usize {
    let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    cores.min(MAX_THREADS).min(len / MIN_BYTES_PER_PART).max(1)
}

/// `(0..parts).map(f).collect()` on `threads` threads (the calling one and
/// scoped ones), each taking the next part not yet taken when it is done
/// with one. Threads of one process do not run at one speed (a new thread
/// starts late and meets memory the system has yet to hand over, and other
/// machines share the cores), so parts are handed out, not assigned.
pub(crate) fn run_parts<R, F>(parts: usize, threads: usize, f: F) -> Vec<R>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let part = next.fetch_add(1, Ordering::Relaxed);
            if part >= parts {
                return done;
            }
            done.push((part, f(part)));
        }
    };
    let by_thread = run_each(vec![(); threads.clamp(1, parts.max(1))], |_, ()| take());
    let mut slots: Vec<Option<R>> = (0..parts).map(|_| None).collect();
    for (part, result) in by_thread.into_iter().flatten() {
        slots[part] = Some(result);
    }
    // Every part below `parts` was taken exactly once, so no slot is empty.
    slots.into_iter().flatten().collect()
}

/// `items.into_iter().enumerate().map(f)`, in parallel for large inputs, with
/// the results left in one vector per chunk. The items are taken out of
/// `items` in place (hence `Default`), by the thread that maps them.
pub(crate) fn map_taken<T, R, F>(mut items: Vec<T>, f: F) -> Vec<Vec<R>>
where
    T: Send + Default,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let chunk_len = items.len().div_ceil(threads_for(items.len())).max(1);
    let chunks: Vec<&mut [T]> = items.chunks_mut(chunk_len).collect();
    run_each(chunks, |c, chunk| {
        let offset = c * chunk_len;
        chunk.iter_mut().enumerate().map(|(i, item)| f(offset + i, std::mem::take(item))).collect()
    })
}

/// `f` over every item of every chunk, each chunk on its own thread; `f`
/// gets the item's position across all chunks.
pub(crate) fn map_chunks<T, R, F>(chunks: Vec<Vec<T>>, f: F) -> Vec<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let mut offset = 0;
    let chunks: Vec<(usize, Vec<T>)> = chunks
        .into_iter()
        .map(|chunk| {
            let start = offset;
            offset += chunk.len();
            (start, chunk)
        })
        .collect();
    let total = offset;
    run_each(chunks, |c, (offset, chunk)| {
        // The first chunk's results get room for all, so [`concat`] need not move them.
        let mut out = Vec::with_capacity(if c == 0 { total } else { chunk.len() });
        out.extend(chunk.into_iter().enumerate().map(|(i, item)| f(offset + i, item)));
        out
    })
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

/// `inputs.into_iter().enumerate().map(f).collect()`, the first input on the
/// calling thread and each other on a scoped thread of its own.
fn run_each<I, R, F>(inputs: Vec<I>, f: F) -> Vec<R>
where
    I: Send,
    R: Send,
    F: Fn(usize, I) -> R + Sync,
{
    let mut inputs = inputs.into_iter();
    let Some(first) = inputs.next() else {
        return Vec::new();
    };
    let f = &f;
    thread::scope(|scope| {
        let handles: Vec<_> =
            inputs.enumerate().map(|(i, input)| scope.spawn(move || f(i + 1, input))).collect();
        let mut out = Vec::with_capacity(handles.len() + 1);
        out.push(f(0, first));
        for handle in handles {
            // A panic in a worker is a bug; surface it on the caller's thread.
            out.push(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        out
    })
}

/// `items.into_iter().enumerate().map(f).collect()`, in parallel for large inputs.
pub(crate) fn map_indexed<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> R + Sync,
{
    let threads = threads_for(items.len());
    if threads == 1 {
        return items.into_iter().enumerate().map(|(i, item)| f(i, item)).collect();
    }
    let len = items.len();
    let chunk_len = len.div_ceil(threads);
    let mut chunks = Vec::with_capacity(threads);
    let mut rest = items;
    while rest.len() > chunk_len {
        let tail = rest.split_off(chunk_len);
        chunks.push(rest);
        rest = tail;
    }
    chunks.push(rest);
    let mut chunks = chunks.into_iter();
    let first = chunks.next().unwrap_or_default();
    let f = &f;
    thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .enumerate()
            .map(|(c, chunk)| {
                scope.spawn(move || {
                    let offset = (c + 1) * chunk_len;
                    chunk.into_iter().enumerate().map(|(i, item)| f(offset + i, item)).collect::<Vec<R>>()
                })
            })
            .collect();
        // The first chunk runs here, into a vector with room for all results,
        // so the other chunks' results are the only ones copied.
        let mut out = Vec::with_capacity(len);
        out.extend(first.into_iter().enumerate().map(|(i, item)| f(i, item)));
        for handle in handles {
            // A panic in a worker is a bug; surface it on the caller's thread.
            out.extend(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        out
    })
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
