//! A clean skill folder of a given size, generated: what the largest
//! published skills hold (XML schemas repeated across folders, fonts, a
//! PDF, references, helper scripts, a `.tar.gz` of components), and the
//! generators of its files. Used by the bundle scan tests and, through
//! `#[path]`, by the scan bench, node's integration tests and its
//! `bundle_pull` bench.

use std::io::Write;

/// `SKILL.md` of the generated bundle: it runs and links files the bundle has.
pub(crate) const SKILL_MD: &str = "---\nname: document-forms\ndescription: Fill, check and render document forms\n---\n# document-forms\n\n1. Run `python scripts/fill.py form.pdf data.json` to fill a form.\n2. Check it with `python scripts/check.py out.pdf`.\n3. The field names are in [the reference](reference.md).\n";

/// Deterministic filler bytes (a linear congruential generator).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect()
}

/// A binary asset of the type `ext` names (`ttf`, `pdf`, `png`): its magic
/// bytes, then `len` bytes of [`noise`] from `seed`.
pub(crate) fn asset(ext: &str, seed: u64, len: usize) -> Vec<u8> {
    let magic: &[u8] = match ext {
        "ttf" => b"\x00\x01\x00\x00\x00\x10\x01\x00",
        "pdf" => b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
        "png" => b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR",
        other => panic!("no generated asset of type {other}"),
    };
    [magic, &noise(seed, len)].concat()
}

pub(crate) fn schema(i: usize, bytes: usize) -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\">\n",
    );
    let mut k = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "  <xs:complexType name=\"CT_Field{i}_{k}\">\n    <xs:sequence>\n      <xs:element name=\"value\" type=\"xs:string\" minOccurs=\"0\"/>\n    </xs:sequence>\n    <xs:attribute name=\"id\" type=\"xs:unsignedInt\" use=\"required\"/>\n  </xs:complexType>\n"
        ));
        k += 1;
    }
    s.push_str("</xs:schema>\n");
    s.into_bytes()
}

pub(crate) fn prose(i: usize, bytes: usize) -> Vec<u8> {
    let mut s = format!("# Reference part {i}\n\n");
    let mut k = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "## Field group {k}\n\nEach field of group {k} holds a value the form shows on page {}. Empty fields are left blank; dates are written as YYYY-MM-DD and amounts with two decimals.\n\n| field | type | note |\n|---|---|---|\n| name_{k} | text | as printed |\n| total_{k} | amount | sum of the lines |\n\n",
            k % 12 + 1
        ));
        k += 1;
    }
    s.into_bytes()
}

pub(crate) fn python(i: usize, bytes: usize) -> Vec<u8> {
    let mut s = format!(
        "#!/usr/bin/env python3\n\"\"\"Helper {i}: reads form data and writes the filled fields.\"\"\"\nimport json\nimport sys\n\n"
    );
    let mut k = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "def field_{k}(data):\n    value = data.get(\"field_{k}\", \"\")\n    return str(value).strip()[:80]\n\n\n"
        ));
        k += 1;
    }
    s.push_str("if __name__ == \"__main__\":\n    data = json.load(open(sys.argv[1]))\n    print(json.dumps({\"ok\": True, \"fields\": len(data)}))\n");
    s.into_bytes()
}

fn component(i: usize, bytes: usize) -> Vec<u8> {
    let mut s = format!(
        "import React from 'react';\n\nexport function Field{i}({{ label, value, onChange }}) {{\n  return (\n    <label>\n      {{label}}\n"
    );
    let mut k = 0;
    while s.len() < bytes {
        s.push_str(&format!("      <input name=\"f{i}_{k}\" value={{value[{k}] ?? ''}} onChange={{(e) => onChange({k}, e.target.value)}} />\n"));
        k += 1;
    }
    s.push_str("    </label>\n  );\n}\n");
    s.into_bytes()
}

fn tar_gz(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        builder.append_data(&mut header, name, bytes.as_slice()).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// The companion files (path, bytes) of a clean bundle of at least `bytes`
/// bytes, about 80 files.
pub(crate) fn generated_bundle(bytes: usize) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // The same 240 KB schema in three folders, as published skills do.
    let shared = schema(0, 240 * 1024);
    for dir in ["docx", "pptx", "xlsx"] {
        files.push((format!("ooxml/{dir}/schemas/wml.xsd"), shared.clone()));
    }
    for i in 1..=12 {
        files.push((format!("ooxml/schemas/part{i}.xsd"), schema(i, 40 * 1024)));
    }
    for (i, name) in ["Sans-Regular", "Sans-Bold", "Serif-Regular"].iter().enumerate() {
        files.push((format!("assets/fonts/{name}.ttf"), asset("ttf", i as u64, 300 * 1024)));
    }
    files.push(("assets/blank-form.pdf".into(), asset("pdf", 9, 200 * 1024)));
    files.push(("assets/logo.png".into(), asset("png", 10, 60 * 1024)));
    files.push(("reference.md".into(), prose(0, 30 * 1024)));
    for i in 1..=20 {
        files.push((format!("references/part{i:02}.md"), prose(i, 40 * 1024)));
    }
    files.push(("scripts/fill.py".into(), python(0, 8 * 1024)));
    files.push(("scripts/check.py".into(), python(1, 8 * 1024)));
    for i in 2..=15 {
        files.push((format!("scripts/lib/helper{i:02}.py"), python(i, 12 * 1024)));
    }
    let components: Vec<(String, Vec<u8>)> =
        (0..40).map(|i| (format!("src/Field{i:02}.jsx"), component(i, 24 * 1024))).collect();
    files.push(("scripts/components.tar.gz".into(), tar_gz(&components)));
    // Fill to the size asked with more references.
    let mut i = 100;
    while files.iter().map(|(_, b)| b.len()).sum::<usize>() < bytes {
        files.push((format!("references/extra/part{i}.md"), prose(i, 64 * 1024)));
        i += 1;
    }
    files
}
