//! Graph files as people write them, and as they go wrong: any text, built from the pieces of
//! edge lists and JSON graphs and from extreme numbers, is either refused with an error or
//! parsed into a connected graph that an edge list of its own edges gives back. Never a
//! panic: `Graph::parse` reads what users name with `file:` topologies.

use hetlb_core::topology::{Graph, Topology};
use proptest::prelude::*;
use proptest::sample::select;

/// Pieces of graph files: syntax of both formats, and numbers at every boundary.
const PIECES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    " ",
    "  ",
    "\t",
    "\n",
    ",",
    "#",
    "# a comment\n",
    "[",
    "]",
    "{",
    "}",
    "[[0, 1], [1, 2]]",
    "\"nodes\"",
    "\"edges\"",
    ":",
    "\"",
    "0 1\n",
    "1 2\n",
    "2 0\n",
    "-1",
    "-0.0",
    "0.5",
    "1e308",
    "nan",
    "inf",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "99999999999999999999999999",
    "é",
    "\u{0}",
    "x",
];

/// Any concatenation of pieces.
fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => select(PIECES).prop_map(str::to_string),
            1 => any::<char>().prop_map(|c| c.to_string()),
        ],
        0..40,
    )
    .prop_map(|pieces| pieces.concat())
}

/// A connected graph of up to six nodes as an edge list or a JSON list, with up to three
/// pieces spliced in at random places (so often valid, often just not).
fn near_valid() -> impl Strategy<Value = String> {
    (
        (
            2usize..7,
            prop::collection::vec((0usize..6, 1usize..6), 0..6),
        )
            .prop_map(|(n, extra)| {
                // A path through every node, then edges between other pairs (never a loop).
                let mut edges: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
                edges.extend(
                    extra
                        .into_iter()
                        .map(|(a, d)| (a % n, (a + d) % n))
                        .filter(|(a, b)| a != b),
                );
                edges
            }),
        select(&[" ", ",", "\t", ", "][..]),
        any::<bool>(),
        prop_oneof![
            2 => Just(Vec::new()),
            1 => prop::collection::vec((any::<prop::sample::Index>(), select(PIECES)), 1..=3),
        ],
    )
        .prop_map(|(edges, sep, json, splices)| {
            let mut text = if json {
                let list: Vec<String> = edges.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
                format!("[{}]", list.join(", "))
            } else {
                edges
                    .iter()
                    .map(|(a, b)| format!("{a}{sep}{b}\n"))
                    .collect()
            };
            for (at, piece) in splices {
                let mut p = at.index(text.len() + 1);
                while !text.is_char_boundary(p) {
                    p -= 1;
                }
                text.insert_str(p, piece);
            }
            text
        })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![pieces(), near_valid()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_text_is_a_graph_or_an_error(text in text(), hint in prop::option::of(1usize..9)) {
        if let Ok(g) = Graph::parse(&text, hint) {
            prop_assert!(g.node_count() >= 1 && g.edge_count() >= 1, "{text:?}");
            if let Some(n) = hint {
                prop_assert_eq!(g.node_count(), n);
            }
            prop_assert!(g.edges().all(|(a, b)| a < g.node_count() && b < g.node_count()));
            // Its own edges, written as an edge list, give the same graph back.
            let list: String = g.edges().map(|(a, b)| format!("{a} {b}\n")).collect();
            prop_assert_eq!(Graph::parse_edge_list(&list, Some(g.node_count())), Ok(g));
        }
    }

    #[test]
    fn a_json_graph_with_any_numbers_is_a_graph_or_an_error(
        nodes in prop_oneof![Just("4".to_string()), select(PIECES).prop_map(str::to_string)],
        edges in prop::collection::vec((select(PIECES), select(PIECES)), 0..6),
    ) {
        let list: Vec<String> = edges.iter().map(|(a, b)| format!("[{a}, {b}]")).collect();
        let text = format!("{{\"nodes\": {nodes}, \"edges\": [{}]}}", list.join(", "));
        if let Ok(g) = Graph::parse(&text, None) {
            prop_assert!(g.node_count() >= 1 && g.edge_count() >= 1, "{text:?}");
        }
    }
}
