//! The faults scenario on a running [`Mesh`]: `kill -9` of some nodes
//! (each just after it acknowledged a skill), a partition of the live
//! nodes in two halves during which both sides make and edit skills, the
//! heal, then the dead nodes back. After the heal every live node must
//! serve the same skill set (names and hashes) holding every version a
//! live node acknowledged, and after the restart so must every node, with
//! the skills the dead acknowledged before they died. (The mesh
//! integration test runs it small; the mesh bench at 100 nodes.)

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use super::nodes::{Mesh, Skills};

/// What to do to the mesh.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Nodes killed with `kill -9`.
    pub(crate) kills: usize,
    /// How long the halves stay apart.
    pub(crate) partition: Duration,
    /// New skills made on each side during the partition.
    pub(crate) skills_per_side: usize,
    /// The longest wait for each convergence.
    pub(crate) converge_within: Duration,
}

/// What happened.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) killed: Vec<usize>,
    /// Live nodes on each side.
    pub(crate) sides: (usize, usize),
    /// Links cut (both directions of each edge between the sides).
    pub(crate) cut_links: usize,
    /// How long the partition lasted, cut to heal.
    pub(crate) partition: Duration,
    /// Skills of one side found on a node of the other just before the heal.
    pub(crate) leaked: Vec<String>,
    /// Skill versions the mesh had to keep, each the last one a node
    /// acknowledged for its name (made, edited, or said before dying): all
    /// found everywhere, or [`run`] fails.
    pub(crate) acknowledged: usize,
    /// From the heal until every live node served the same set with all of them.
    pub(crate) healed_in: Duration,
    /// From the restart of the dead until every node served the same set.
    pub(crate) restarted_in: Duration,
    /// Skills in the set after the heal, and in the final set.
    pub(crate) skills: (usize, usize),
}

/// Runs the scenario; an error says what did not converge or what was lost.
pub(crate) async fn run(mesh: &mut Mesh, plan: &Plan, rng: &mut StdRng) -> Result<Outcome, String> {
    let n = mesh.len();
    let killed = mesh.graph.doomed(plan.kills, &[], rng)?;
    let survivors: Vec<usize> = (0..n).filter(|v| !killed.contains(v)).collect();

    // Skills every node holds before the faults; each side edits its own during the partition.
    let mut expected = Skills::new();
    let mut base = Vec::new();
    for (i, &v) in survivors.choose_multiple(rng, 4).enumerate() {
        let name = format!("base-{i}");
        expected.insert(name.clone(), mesh.add_skill(v, &name, "Read the failing test first.").await?);
        base.push((name, v));
    }
    mesh.converge(&expected, plan.converge_within).await.map_err(|e| format!("before the faults: {e}"))?;

    // Each doomed node acknowledges a skill and dies at once: what it took
    // must survive the kill and reach everyone once it is back.
    let mut last_words = Vec::new();
    for &v in &killed {
        let name = format!("last-words-{v}");
        mesh.post_skill(v, &name, "Write it down before you go.").await?;
        mesh.kill(v);
        last_words.push((v, name));
    }

    let side = mesh.graph.halves(&mesh.alive(), rng);
    let sides =
        (survivors.iter().filter(|&&v| side[v]).count(), survivors.iter().filter(|&&v| !side[v]).count());
    mesh.partition(Some(&side));
    let cut_at = Instant::now();
    let cut_links = mesh.links().iter().filter(|l| side[l.from] != side[l.to]).count();
    let on_side = |s: bool| survivors.iter().copied().filter(|&v| side[v] == s).collect::<Vec<_>>();
    let (left, right) = (on_side(true), on_side(false));
    let mut made: Vec<(String, bool)> = Vec::new();
    let step = plan.partition / (plan.skills_per_side as u32 + 1);
    for k in 0..plan.skills_per_side {
        tokio::time::sleep_until((cut_at + step * (k as u32 + 1)).into()).await;
        for (s, nodes) in [(true, &left), (false, &right)] {
            let &v = nodes.choose(rng).ok_or_else(|| "a side of the partition is empty".to_owned())?;
            let name = format!("side-{}-{k}", if s { "a" } else { "b" });
            expected.insert(
                name.clone(),
                mesh.add_skill(v, &name, &format!("Made at node {v}, cut off.")).await?,
            );
            made.push((name, s));
        }
        if k == plan.skills_per_side / 2 {
            for (name, origin) in &base {
                let edited = format!("Edited at node {origin} during the partition.");
                expected.insert(name.clone(), mesh.add_skill(*origin, name, &edited).await?);
            }
        }
    }
    tokio::time::sleep_until((cut_at + plan.partition).into()).await;

    // The cut held: no skill made on one side reached the other.
    let mut leaked = Vec::new();
    for &v in &survivors {
        let held = mesh.skills(v).await?;
        leaked.extend(
            made.iter()
                .filter(|(name, s)| *s != side[v] && held.contains_key(name))
                .map(|(name, _)| format!("{name} at node {v}")),
        );
    }
    mesh.partition(None);
    let partition = cut_at.elapsed();
    let healed = Instant::now();
    let healed_set =
        mesh.converge(&expected, plan.converge_within).await.map_err(|e| format!("after the heal: {e}"))?;
    let healed_in = healed.elapsed();

    let restarted = Instant::now();
    for &v in &killed {
        mesh.restart(v).await?;
    }
    for (v, name) in last_words {
        let hash = mesh.own_hash(v, &name).await.map_err(|e| format!("lost by kill -9: {e}"))?;
        expected.insert(name, hash);
    }
    let all = mesh
        .converge(&expected, plan.converge_within)
        .await
        .map_err(|e| format!("after the restart: {e}"))?;
    let restarted_in = restarted.elapsed();
    Ok(Outcome {
        killed,
        sides,
        cut_links,
        partition,
        leaked,
        acknowledged: expected.len(),
        healed_in,
        restarted_in,
        skills: (healed_set.len(), all.len()),
    })
}
