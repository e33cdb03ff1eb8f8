//! The mesh's shape: a seeded random connected graph in which every node
//! has 3 or 4 neighbours, its diameter, which nodes may die with the rest
//! still connected, and a cut of the live nodes in two halves.
//! (The mesh integration test uses this file too.)

use std::collections::VecDeque;

use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};

/// Draws of the configuration model before giving up.
const ATTEMPTS: usize = 100_000;

/// An undirected graph on nodes `0..n`.
#[derive(Debug, Clone)]
pub(crate) struct Graph {
    adjacent: Vec<Vec<usize>>,
}

impl Graph {
    /// A random connected graph on `n` nodes (at least 5), each of degree 3
    /// or 4, with no loops and no double edges; the same `seed` gives the
    /// same graph. Configuration model: each node gets 3 or 4 stubs, the
    /// stubs are shuffled and paired, and a draw with a loop, a double edge
    /// or two components is drawn again.
    pub(crate) fn random(n: usize, seed: u64) -> Result<Graph, String> {
        if n < 5 {
            return Err(format!("a graph of degree 3-4 needs at least 5 nodes (got {n})"));
        }
        let mut rng = StdRng::seed_from_u64(seed);
        for _ in 0..ATTEMPTS {
            let mut degrees: Vec<usize> = (0..n).map(|_| rng.random_range(3..=4)).collect();
            if degrees.iter().sum::<usize>() % 2 == 1 {
                // An odd number of stubs cannot pair: one node changes degree.
                let v = rng.random_range(0..n);
                degrees[v] = 7 - degrees[v];
            }
            let mut stubs: Vec<usize> = degrees.iter().enumerate().flat_map(|(v, &d)| vec![v; d]).collect();
            stubs.shuffle(&mut rng);
            let mut adjacent = vec![Vec::new(); n];
            let simple = stubs.chunks(2).all(|pair| {
                let (a, b) = (pair[0], pair[1]);
                if a == b || adjacent[a].contains(&b) {
                    return false;
                }
                adjacent[a].push(b);
                adjacent[b].push(a);
                true
            });
            let graph = Graph { adjacent };
            if simple && graph.connected(&vec![true; n]) {
                return Ok(graph);
            }
        }
        Err(format!("no connected graph of degree 3-4 on {n} nodes in {ATTEMPTS} draws"))
    }

    pub(crate) fn len(&self) -> usize {
        self.adjacent.len()
    }

    pub(crate) fn neighbours(&self, v: usize) -> &[usize] {
        &self.adjacent[v]
    }

    /// Its edges, each once, as `(a, b)` with `a < b`.
    pub(crate) fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.adjacent
            .iter()
            .enumerate()
            .flat_map(|(a, ns)| ns.iter().filter(move |&&b| a < b).map(move |&b| (a, b)))
    }

    /// Hops from `source` to every node over `alive` nodes (`None`: not reachable).
    fn distances(&self, source: usize, alive: &[bool]) -> Vec<Option<usize>> {
        let mut distance = vec![None; self.len()];
        distance[source] = Some(0);
        let mut queue = VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            let next = distance[v].map(|d| d + 1);
            for &w in &self.adjacent[v] {
                if alive[w] && distance[w].is_none() {
                    distance[w] = next;
                    queue.push_back(w);
                }
            }
        }
        distance
    }

    /// Hops from `source` to each node.
    pub(crate) fn hops_from(&self, source: usize) -> Vec<usize> {
        self.distances(source, &vec![true; self.len()]).into_iter().map(|d| d.unwrap_or(usize::MAX)).collect()
    }

    /// The longest shortest path between two nodes.
    pub(crate) fn diameter(&self) -> usize {
        let all = vec![true; self.len()];
        (0..self.len()).flat_map(|s| self.distances(s, &all)).flatten().max().unwrap_or(0)
    }

    /// Whether the `alive` nodes are all connected through alive nodes.
    pub(crate) fn connected(&self, alive: &[bool]) -> bool {
        let Some(first) = alive.iter().position(|&a| a) else { return true };
        let distance = self.distances(first, alive);
        alive.iter().zip(&distance).all(|(&a, d)| !a || d.is_some())
    }

    /// `count` random nodes, never one of `spared`, whose loss leaves the rest
    /// connected (a mesh cut in pieces by deaths alone could never converge).
    pub(crate) fn doomed(
        &self,
        count: usize,
        spared: &[usize],
        rng: &mut StdRng,
    ) -> Result<Vec<usize>, String> {
        let candidates: Vec<usize> = (0..self.len()).filter(|v| !spared.contains(v)).collect();
        for _ in 0..ATTEMPTS {
            let picked: Vec<usize> = candidates.choose_multiple(rng, count).copied().collect();
            let alive: Vec<bool> = (0..self.len()).map(|v| !picked.contains(&v)).collect();
            if picked.len() == count && self.connected(&alive) {
                return Ok(picked);
            }
        }
        Err(format!("no {count} nodes of {} leave the rest connected", self.len()))
    }

    /// A cut of the `alive` nodes in two halves: side `true` is the half
    /// reached first by a breadth-first walk from a random live node, so
    /// each side is mostly connected within itself, as the two sides of a
    /// failed link between two sites would be.
    pub(crate) fn halves(&self, alive: &[bool], rng: &mut StdRng) -> Vec<bool> {
        let live: Vec<usize> = (0..self.len()).filter(|&v| alive[v]).collect();
        let mut side = vec![false; self.len()];
        let Some(&start) = live.choose(rng) else { return side };
        let distance = self.distances(start, alive);
        let mut order: Vec<usize> = live.iter().copied().filter(|&v| distance[v].is_some()).collect();
        order.sort_by_key(|&v| distance[v]);
        for &v in order.iter().take(live.len() / 2) {
            side[v] = true;
        }
        side
    }
}
