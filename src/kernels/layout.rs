//! Per-member buffer layouts, declared once in Rust. A layout is an ordered list of named
//! fields of reals; the WGSL constants that kernels index with (`STATE_X`, `STATE_X_LEN`,
//! `STATE_ENTRIES`, …) are generated from it, and the host reads results through the same
//! declaration, so no offset is written twice.
//!
//! Buffers are structure-of-arrays across the members of a chunk: entry e of member i sits
//! at e · members + i, so neighbouring invocations read neighbouring addresses.

use std::ops::Range;

use rayon::prelude::*;

/// One named block of `len` reals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub len: usize,
}

/// An ordered list of fields; `prefix` names the buffer in generated WGSL (`STATE`, `RECORD`,
/// `PARAM`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub prefix: &'static str,
    pub fields: Vec<Field>,
}

impl Layout {
    pub fn new(prefix: &'static str) -> Self {
        Layout {
            prefix,
            fields: Vec::new(),
        }
    }

    /// Appends a field of `len` reals.
    pub fn field(mut self, name: &'static str, len: usize) -> Self {
        debug_assert!(
            self.fields.iter().all(|f| f.name != name),
            "duplicate field {name}"
        );
        self.fields.push(Field { name, len });
        self
    }

    /// Entries per member.
    pub fn entries(&self) -> usize {
        self.fields.iter().map(|f| f.len).sum()
    }

    /// First entry of field `name`.
    ///
    /// # Panics
    /// When the layout has no such field (a programming error in a family, not user input).
    pub fn offset(&self, name: &str) -> usize {
        let mut offset = 0;
        for f in &self.fields {
            if f.name == name {
                return offset;
            }
            offset += f.len;
        }
        panic!("layout {} has no field {name}", self.prefix)
    }

    /// Length of field `name`.
    pub fn len_of(&self, name: &str) -> usize {
        self.fields.iter().find(|f| f.name == name).map_or_else(
            || panic!("layout {} has no field {name}", self.prefix),
            |f| f.len,
        )
    }

    /// WGSL constants: `const <PREFIX>_<FIELD>: u32` (offset) and `…_LEN` per field, and
    /// `<PREFIX>_ENTRIES`.
    pub fn wgsl(&self) -> String {
        let mut out = String::new();
        let mut offset = 0;
        for f in &self.fields {
            let name = format!("{}_{}", self.prefix, f.name.to_uppercase());
            out.push_str(&format!(
                "const {name}: u32 = {offset}u;\nconst {name}_LEN: u32 = {}u;\n",
                f.len
            ));
            offset += f.len;
        }
        out.push_str(&format!(
            "const {}_ENTRIES: u32 = {offset}u;\n",
            self.prefix
        ));
        out
    }

    /// Packs per-member values structure-of-arrays: `fill(i, field, values)` writes member
    /// i's values of each field (`values` holds zeros before). Members are filled on all
    /// cores in pieces of `PACK_PIECE_MEMBERS`, each piece's members side by side, and the
    /// pieces copied to the rows a few at a time, so the memory beside the packed buffer
    /// stays a few pieces' worth.
    pub fn pack(&self, members: usize, fill: impl Fn(usize, &str, &mut [f64]) + Sync) -> Vec<f64> {
        let entries = self.entries();
        let mut packed = vec![0.0; entries * members];
        if entries == 0 {
            return packed;
        }
        // Members `range`, member-major: member a + k's entries at k · entries.
        let fill_piece = |range: Range<usize>| -> Vec<f64> {
            let mut values = vec![0.0; range.len() * entries];
            for (i, member) in range.zip(values.chunks_exact_mut(entries)) {
                let mut offset = 0;
                for f in &self.fields {
                    fill(i, f.name, &mut member[offset..offset + f.len]);
                    offset += f.len;
                }
            }
            values
        };
        let starts: Vec<usize> = (0..members).step_by(PACK_PIECE_MEMBERS).collect();
        for round in starts.chunks(rayon::current_num_threads().max(1)) {
            let pieces: Vec<(usize, Vec<f64>)> = round
                .par_iter()
                .map(|&a| (a, fill_piece(a..(a + PACK_PIECE_MEMBERS).min(members))))
                .collect();
            // Row e (entry e of every member) takes entry e of each piece's members.
            packed
                .par_chunks_mut(members)
                .enumerate()
                .for_each(|(e, row)| {
                    for (a, values) in &pieces {
                        let piece = values.len() / entries;
                        for (k, value) in row[*a..*a + piece].iter_mut().enumerate() {
                            *value = values[k * entries + e];
                        }
                    }
                });
        }
        packed
    }
}

/// Members one task of [`Layout::pack`] fills.
const PACK_PIECE_MEMBERS: usize = 1 << 12;

/// Reads one member's entries of a structure-of-arrays buffer through its layout.
pub struct MemberView<'a> {
    pub layout: &'a Layout,
    pub values: &'a [f64],
    /// Members in the buffer (the stride).
    pub members: usize,
    /// First entry of the record slot (0 for the state).
    pub base: usize,
    pub member: usize,
}

impl MemberView<'_> {
    /// Entry j of field `name`.
    pub fn get(&self, name: &str, j: usize) -> f64 {
        self.values[(self.base + self.layout.offset(name) + j) * self.members + self.member]
    }

    /// Appends the whole field `name` to `out`.
    pub fn extend_into(&self, name: &str, out: &mut Vec<f64>) {
        let (offset, len) = (self.layout.offset(name), self.layout.len_of(name));
        out.extend(
            (0..len).map(|j| self.values[(self.base + offset + j) * self.members + self.member]),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_wgsl_agree() {
        let layout = Layout::new("STATE")
            .field("x", 3)
            .field("carry", 3)
            .field("h", 1);
        assert_eq!(layout.entries(), 7);
        assert_eq!(layout.offset("carry"), 3);
        assert_eq!(layout.offset("h"), 6);
        let wgsl = layout.wgsl();
        assert!(wgsl.contains("const STATE_CARRY: u32 = 3u;"), "{wgsl}");
        assert!(wgsl.contains("const STATE_H_LEN: u32 = 1u;"), "{wgsl}");
        assert!(wgsl.contains("const STATE_ENTRIES: u32 = 7u;"), "{wgsl}");
    }

    /// Pieces filled on all cores pack as one member after another would: several rounds
    /// of pieces and a partial last one, fields left untouched at 0, an empty field.
    #[test]
    fn pieces_pack_as_members_one_by_one() {
        let layout = Layout::new("P")
            .field("a", 3)
            .field("none", 0)
            .field("untouched", 2)
            .field("b", 1);
        let members = 5 * PACK_PIECE_MEMBERS * rayon::current_num_threads() + 17;
        let value = |i: usize, name: &str, j: usize| {
            (i as f64).sqrt() * if name == "a" { 1.0 + j as f64 } else { -0.5 }
        };
        let packed = layout.pack(members, |i, name, out| {
            if name != "untouched" {
                for (j, v) in out.iter_mut().enumerate() {
                    *v = value(i, name, j);
                }
            }
        });
        let entries = layout.entries();
        assert_eq!(packed.len(), entries * members);
        for i in (0..members).step_by(97).chain([members - 1]) {
            let expected = [
                value(i, "a", 0),
                value(i, "a", 1),
                value(i, "a", 2),
                0.0,
                0.0,
                value(i, "b", 0),
            ];
            let got: Vec<f64> = (0..entries).map(|e| packed[e * members + i]).collect();
            assert_eq!(got, expected, "member {i}");
        }
    }

    #[test]
    fn packing_is_structure_of_arrays_and_views_read_it_back() {
        let layout = Layout::new("P").field("a", 2).field("b", 1);
        let packed = layout.pack(3, |i, name, out| {
            for (j, v) in out.iter_mut().enumerate() {
                *v = (10 * i + j) as f64 + if name == "b" { 0.5 } else { 0.0 };
            }
        });
        // entry e of member i at e · 3 + i
        assert_eq!(packed[3 + 2], 21.0);
        assert_eq!(packed[2 * 3 + 1], 10.5);
        let view = MemberView {
            layout: &layout,
            values: &packed,
            members: 3,
            base: 0,
            member: 2,
        };
        assert_eq!(view.get("a", 1), 21.0);
        let mut out = Vec::new();
        view.extend_into("b", &mut out);
        assert_eq!(out, vec![20.5]);
    }
}
