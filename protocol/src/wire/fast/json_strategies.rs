//! Generators of JSON text for the decoders' tests: updates and packets that
//! are mostly well formed, with the quotes, backslashes, brackets, escapes,
//! repeated keys and wrong types that a hand-written reader can get wrong.

use proptest::prelude::*;

/// Whitespace as JSON allows it, sometimes none.
fn ws() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&["", "", "", " ", "\n  ", "\t", "\r\n"][..])
}

/// String contents that trip up a splitter: quotes, backslashes, brackets,
/// escapes of every kind, raw non-ASCII; now and then an invalid escape or a
/// raw control byte.
pub(super) fn string() -> impl Strategy<Value = String> {
    let valid = prop::sample::select(
        &[
            "a",
            "skill",
            " ",
            "},{",
            "} , {",
            "\\\"",
            "\\\\",
            "\\n",
            "\\/",
            "\\t",
            "\\u00e9",
            "\\ud83d\\ude00",
            "]",
            "[",
            "}",
            "{",
            ",",
            ":",
            "é",
            "\\u0022",
            "\\\\\\\"",
            "---\\nname: x\\n---\\n",
        ][..],
    );
    let invalid = prop::sample::select(&["\\ud800", "\\x", "\u{1}", "\\u12"][..]);
    let piece = prop_oneof![150 => valid, 1 => invalid];
    prop::collection::vec(piece, 0..6).prop_map(|p| format!("\"{}\"", p.concat()))
}

/// A value of the type a packet field wants, mostly.
fn typed(good: impl Strategy<Value = String> + 'static) -> impl Strategy<Value = String> {
    prop_oneof![40 => good, 1 => scalar()]
}

fn scalar() -> impl Strategy<Value = String> {
    let valid = prop::sample::select(
        &["null", "true", "false", "0", "-1", "0.5", "-0", "7.25e-1", "\"2026-11-20T10:00:00Z\""][..],
    );
    let invalid = prop::sample::select(&["1e400", "01", "nul", "1.", "+1"][..]);
    prop_oneof![20 => string(), 20 => valid.prop_map(str::to_owned), 1 => invalid.prop_map(str::to_owned)]
}

/// A key of a packet, an update or of neither, sometimes spelled with an escape.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(
            &[
                "id", "version", "createdAt", "originInstance", "originOS", "skillName", "skillDescription",
                "skillBody", "patterns", "confidence", "integrityHash", "shareable", "tags", "deprecated",
                "provenance", "path", "hops", "files", "bundleDigest", "peerInstance", "generatedAt", "skills", "stats", "sequenceNum",
                "totalSkills", "sk\\u0069lls", "other",
            ][..]
        )
        .prop_map(|k| format!("\"{k}\"")),
        1 => string(),
    ]
}

/// Any JSON-like value, nested, with the keys the decoders care about.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            (prop::collection::vec((ws(), inner.clone()), 0..5), ws()).prop_map(|(items, w)| {
                let items: Vec<String> = items.into_iter().map(|(w, v)| format!("{w}{v}")).collect();
                format!("[{}{w}]", items.join(","))
            }),
            (prop::collection::vec((key(), ws(), inner), 0..6), ws()).prop_map(|(entries, w)| {
                let entries: Vec<String> =
                    entries.into_iter().map(|(k, w, v)| format!("{k}{w}:{v}")).collect();
                format!("{{{}{w}}}", entries.join(","))
            }),
        ]
    })
}

/// A packet object: mostly fields of the right type, some of any type.
pub(super) fn packet() -> impl Strategy<Value = String> {
    let number =
        prop::sample::select(&["0", "1", "0.5", "0.90", "-0", "1e-1", "2E0", "0.1234567890123456789"][..]);
    let time = prop::sample::select(
        &["\"2026-11-20T10:00:00Z\"", "\"2026-11-20T12:00:05.5+02:00\"", "null", "\"yesterday\""][..],
    );
    let list = prop::collection::vec(string(), 0..3).prop_map(|t| format!("[{}]", t.join(",")));
    let field = prop_oneof![
        6 => (
            prop::sample::select(
                &["id", "version", "originInstance", "originUserHash", "originOS", "originVersion", "skillName",
                  "skillDescription", "skillBody", "integrityHash", "bundleDigest"][..]
            ),
            typed(prop_oneof![6 => string(), 1 => Just("null".to_owned())]),
        ).prop_map(|(k, v)| (format!("\"{k}\""), v)),
        2 => (Just("\"confidence\"".to_owned()), typed(number.prop_map(str::to_owned))),
        1 => (Just("\"createdAt\"".to_owned()), typed(time.prop_map(str::to_owned))),
        2 => (prop::sample::select(&["\"tags\"", "\"patterns\""][..]).prop_map(str::to_owned), typed(list)),
        1 => (prop::sample::select(&["\"deprecated\"", "\"shareable\""][..]).prop_map(str::to_owned),
              typed(prop::sample::select(&["true", "false"][..]).prop_map(str::to_owned))),
        1 => (Just("\"provenance\"".to_owned()), prop_oneof![Just("null".to_owned()), Just("{\"hops\":2,\"path\":[\"a\"]}".to_owned()), value()]),
        1 => (Just("\"files\"".to_owned()), prop_oneof![
            Just("null".to_owned()),
            Just("[]".to_owned()),
            Just("[{\"path\":\"SKILL.md\",\"size\":3,\"mode\":\"0644\",\"sha256\":\"ab\"}]".to_owned()),
            Just("[{\"size\":-1}]".to_owned()),
            value(),
        ]),
        1 => (Just("\"originSignature\"".to_owned()), prop_oneof![
            Just("null".to_owned()),
            Just("{\"instance\":\"a\",\"keyId\":\"K\",\"publicKey\":\"00\",\"sig\":\"11\"}".to_owned()),
            Just("{\"sig\":1}".to_owned()),
            value(),
        ]),
        1 => (Just("\"outcomes\"".to_owned()), prop_oneof![
            Just("null".to_owned()),
            Just("[{\"observer\":\"a\",\"uses\":2,\"successes\":1,\"failures\":1,\"streak\":0,\"at\":\"2026-11-20T10:00:00Z\"}]".to_owned()),
            Just("[{\"uses\":1.5}]".to_owned()),
            value(),
        ]),
        1 => (key(), value()),
    ];
    (prop::collection::vec((ws(), field, ws()), 0..8), any::<bool>()).prop_map(|(fields, repeats)| {
        let fields = if repeats { fields } else { first_of_each_key(fields) };
        let fields: Vec<String> =
            fields.into_iter().map(|(a, (k, v), b)| format!("{a}{k}{b}:{b}{v}{a}")).collect();
        format!("{{{}}}", fields.join(","))
    })
}

/// The entries whose key comes first: serde refuses a repeated field.
fn first_of_each_key<W>(entries: Vec<(W, (String, String), W)>) -> Vec<(W, (String, String), W)> {
    let mut seen = std::collections::HashSet::new();
    entries.into_iter().filter(|(_, (k, _), _)| seen.insert(k.clone())).collect()
}

/// An update: the usual keys and some others in any order, repeats allowed.
pub(super) fn update() -> impl Strategy<Value = String> {
    let element = prop_oneof![20 => packet(), 1 => value()];
    let skills = prop_oneof![
        6 => (prop::collection::vec((ws(), element), 0..5), ws()).prop_map(|(items, w)| {
            let items: Vec<String> = items.into_iter().map(|(w, v)| format!("{w}{v}")).collect();
            format!("[{}{w}]", items.join(","))
        }),
        1 => value(),
    ];
    let entry = prop_oneof![
        6 => skills.prop_map(|v| ("\"skills\"".to_owned(), v)),
        2 => (prop::sample::select(&["\"id\"", "\"peerInstance\""][..]).prop_map(str::to_owned), typed(string())),
        1 => (Just("\"sequenceNum\"".to_owned()), typed(Just("42".to_owned()))),
        1 => (Just("\"stats\"".to_owned()), prop_oneof![Just("{\"totalSkills\":3}".to_owned()), value()]),
        1 => (key(), value()),
    ];
    (ws(), prop::collection::vec((ws(), entry, ws()), 0..4), any::<bool>(), ws()).prop_map(
        |(a, entries, repeats, b)| {
            let entries = if repeats { entries } else { first_of_each_key(entries) };
            let entries: Vec<String> =
                entries.into_iter().map(|(w, (k, v), x)| format!("{w}{k}{x}:{w}{v}{x}")).collect();
            format!("{a}{{{}}}{b}", entries.join(","))
        },
    )
}
