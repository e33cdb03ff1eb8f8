//! A batch of committed changes applied to the skills folder: a large one
//! (a merged slice of a pull) by several threads, each skill folder's
//! changes by one thread in their order.

use super::{Projection, ProjectionError};
use crate::store::Change;

impl Projection {
    /// Applies committed changes to the folder; a withheld one (review
    /// intake) leaves the file as it is. A large batch (a page of a pull) is
    /// written by several threads ([`writers`]), each skill folder's changes
    /// by one of them in their order; a failure stops its thread's share, and
    /// the first failure is returned.
    pub fn apply(&self, changes: &[Change]) -> Result<(), ProjectionError> {
        let live: Vec<&Change> = changes.iter().filter(|c| !c.withheld).collect();
        let threads = writers(live.len());
        if threads <= 1 {
            return self.apply_each(live);
        }
        let mut shards: Vec<Vec<&Change>> = vec![Vec::new(); threads];
        for change in live {
            shards[self.shard_of(&change.packet.skill_name, threads)].push(change);
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                shards.into_iter().map(|shard| scope.spawn(move || self.apply_each(shard))).collect();
            let mut outcome = Ok(());
            for handle in handles {
                let done = handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                outcome = outcome.and(done);
            }
            outcome
        })
    }

    fn apply_each(&self, changes: Vec<&Change>) -> Result<(), ProjectionError> {
        for change in changes {
            if change.packet.deprecated {
                self.remove(&change.packet.skill_name)?;
            } else {
                self.write(&change.packet, change.kind)?;
            }
        }
        Ok(())
    }

    /// The writer thread of `name`'s changes: by the folder it is written
    /// in, so two names sharing a folder (an imported skill's entry named
    /// as another skill) never race in it.
    fn shard_of(&self, name: &str, threads: usize) -> usize {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let hasher = BuildHasherDefault::<DefaultHasher>::default();
        let key = match self.skill_dir(name) {
            Ok(Some(dir)) => hasher.hash_one(dir),
            _ => hasher.hash_one(name),
        };
        usize::try_from(key % threads as u64).unwrap_or(0)
    }
}

/// Changes in a batch below which one thread writes them all: a thread
/// costs more than the few files it would write.
const PARALLEL_FROM: usize = 64;

/// How many threads write a batch of `changes`: one per core, at most
/// four, when the batch is large. The file system work of a skill (its
/// folder, its file, the record) is mostly the kernel's, in separate
/// folders, and the stamp and the record's hash are the CPU's: on a pull of
/// 10,000 skills one thread wrote the folder for the second half of the
/// pull, alone on the machine.
fn writers(changes: usize) -> usize {
    if changes < PARALLEL_FROM {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    cores.clamp(1, 4).min(changes / (PARALLEL_FROM / 2))
}
