//! A mesh of 12 real `ecp-node` processes through faults (#18 item 4, the
//! small version of the mesh bench, with the bench's own code from
//! `benches/mesh/`): `kill -9` of two nodes just after each acknowledged a
//! skill, a partition in two halves during which both sides make and edit
//! skills, the heal, the restart. Every node converges to the same skills
//! and hashes, and nothing acknowledged is lost.

// Shared with the mesh bench, which uses all of them: what this test
// leaves unused is not dead.
#[allow(dead_code)]
#[path = "../../benches/mesh/faults.rs"]
mod faults;
#[allow(dead_code)]
#[path = "../../benches/mesh/graph.rs"]
mod graph;
#[allow(dead_code)]
#[path = "../../benches/mesh/links.rs"]
mod links;
#[allow(dead_code)]
#[path = "../../benches/mesh/nodes.rs"]
mod nodes;

use std::path::Path;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;

use graph::Graph;
use nodes::{Mesh, Settings};

/// Generous: the whole suite runs in parallel on two cores.
const WITHIN: Duration = Duration::from_secs(90);

#[test]
fn random_graphs_are_connected_with_3_or_4_neighbours_per_node_from_5_nodes() {
    for (n, seed) in [(5, 0), (12, 1), (12, 2), (40, 3), (100, 18)] {
        let g = Graph::random(n, seed).unwrap_or_else(|e| panic!("{n} nodes, seed {seed}: {e}"));
        for v in 0..n {
            let mut ns = g.neighbours(v).to_vec();
            assert!((3..=4).contains(&ns.len()), "node {v} of {n} has {} neighbours", ns.len());
            ns.sort();
            ns.dedup();
            assert_eq!(ns.len(), g.neighbours(v).len(), "a double edge at node {v}");
            assert!(!ns.contains(&v), "a loop at node {v}");
        }
        assert!(g.connected(&vec![true; n]), "{n} nodes, seed {seed}: not connected");
        assert_eq!(
            Graph::random(n, seed).unwrap().edges().collect::<Vec<_>>(),
            g.edges().collect::<Vec<_>>()
        );
    }
    let refused = Graph::random(4, 0).unwrap_err();
    assert!(refused.contains("at least 5 nodes"), "{refused}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mesh_converges_through_kill_9_partition_heal_and_restart_losing_nothing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let graph = Graph::random(12, 7).expect("a graph");
    // Short request timeouts: a black-holed request costs its round this long.
    let settings = Settings { interval: Duration::from_secs(1), push: true, timeout: Duration::from_secs(2) };
    let mut mesh = Mesh::start(Path::new(env!("CARGO_BIN_EXE_ecp-node")), dir.path(), graph, &settings)
        .await
        .unwrap_or_else(|e| panic!("the mesh starts: {e}"));
    mesh.settle(WITHIN).await.unwrap_or_else(|e| panic!("the mesh settles: {e}"));

    let plan = faults::Plan {
        kills: 2,
        partition: Duration::from_secs(6),
        skills_per_side: 2,
        converge_within: WITHIN,
    };
    let outcome = match faults::run(&mut mesh, &plan, &mut StdRng::seed_from_u64(7)).await {
        Ok(outcome) => outcome,
        Err(e) => {
            let logs: Vec<String> =
                (0..mesh.len()).map(|v| format!("node {v}:\n{}", mesh.log_tail(v))).collect();
            panic!("{e}\n{}", logs.join("\n"));
        }
    };

    eprintln!("mesh faults: {outcome:?}");
    assert_eq!(outcome.killed.len(), 2, "{outcome:?}");
    assert_eq!(outcome.sides.0 + outcome.sides.1, 10, "{outcome:?}");
    assert!(outcome.cut_links > 0, "the halves were linked: {outcome:?}");
    assert!(outcome.leaked.is_empty(), "the partition leaked: {outcome:?}");
    // 4 made before the faults (and edited during them), 2 per side, one per killed node.
    assert_eq!(outcome.acknowledged, 4 + 2 * 2 + 2, "{outcome:?}");
    assert_eq!(
        outcome.skills.1, outcome.acknowledged,
        "the final set holds exactly what was acknowledged: {outcome:?}"
    );
}
