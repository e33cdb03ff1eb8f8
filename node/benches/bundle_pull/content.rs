//! The bench's skill folders, generated: bundle `k` of [`bundle`] holds 20
//! to 40 files (30 on average over the bundles) and 150 to 450 KB (300 KB on
//! average), a quarter of its files binary (fonts, PDFs, PNGs), the rest
//! Markdown references, Python helpers and XML schemas. Every file's bytes
//! differ from every other bundle's, so nothing is stored or fetched once
//! for several bundles.

use crate::generated_bundle::{asset, prose, python, schema};

/// One skill folder: its `SKILL.md` and the other files (path, bytes).
pub(crate) struct Folder {
    pub(crate) name: String,
    pub(crate) skill_md: String,
    pub(crate) files: Vec<(String, Vec<u8>)>,
}

impl Folder {
    /// Bytes of all its files, `SKILL.md` included.
    pub(crate) fn bytes(&self) -> usize {
        self.skill_md.len() + self.files.iter().map(|(_, b)| b.len()).sum::<usize>()
    }

    /// Its files, `SKILL.md` included.
    pub(crate) fn count(&self) -> usize {
        self.files.len() + 1
    }

    /// Every file as (path inside the folder, bytes).
    pub(crate) fn all(&self) -> impl Iterator<Item = (&str, &[u8])> {
        std::iter::once(("SKILL.md", self.skill_md.as_bytes()))
            .chain(self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
    }
}

/// Bundle `k`.
pub(crate) fn bundle(k: usize) -> Folder {
    let name = format!("bench-{k:04}");
    // Multipliers prime to the moduli: over any 21 (11) consecutive
    // bundles every count (size) occurs once, so the averages hold.
    let count = 20 + (k * 8) % 21;
    let target = 300 * 1024 * (5 + (k * 3) % 11) / 10;
    let skill_md = format!(
        "---\nname: {name}\ndescription: Fill and check the forms of bench set {k} with its references and schemas\n---\n\
         # {name}\n\nRead the references in this folder before filling a form; the schemas name every field.\n\n{}",
        String::from_utf8(prose(k, 1024)).expect("prose is text")
    );
    let companions = count - 1;
    // Binary files weigh twice a text file.
    let weight = |j: usize| if j.is_multiple_of(4) { 2 } else { 1 };
    let units: usize = (0..companions).map(weight).sum();
    let unit = target.saturating_sub(skill_md.len()) / units;
    let files = (0..companions)
        .map(|j| {
            let (id, size) = (k * 64 + j, unit * weight(j));
            match j % 4 {
                0 => {
                    let ext = ["ttf", "pdf", "png"][(j / 4) % 3];
                    (format!("assets/asset{j:02}.{ext}"), asset(ext, id as u64, size))
                }
                1 => (format!("references/part{j:02}.md"), prose(id, size)),
                2 => (format!("scripts/tool{j:02}.py"), python(id, size)),
                _ => (format!("schemas/part{j:02}.xsd"), schema(id, size)),
            }
        })
        .collect();
    Folder { name, skill_md, files }
}
