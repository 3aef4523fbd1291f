//! Per-member buffer layouts, declared once in Rust. A layout is an ordered list of named
//! fields of reals; the WGSL constants that kernels index with (`STATE_X`, `STATE_X_LEN`,
//! `STATE_ENTRIES`, …) are generated from it, and the host reads results through the same
//! declaration, so no offset is written twice.
//!
//! Buffers are structure-of-arrays across the members of a chunk: entry e of member i sits
//! at e · members + i, so neighbouring invocations read neighbouring addresses.

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
    /// i's values of each field.
    pub fn pack(&self, members: usize, mut fill: impl FnMut(usize, &str, &mut [f64])) -> Vec<f64> {
        let entries = self.entries();
        let mut packed = vec![0.0; entries * members];
        let mut scratch = Vec::new();
        for i in 0..members {
            let mut offset = 0;
            for f in &self.fields {
                scratch.clear();
                scratch.resize(f.len, 0.0);
                fill(i, f.name, &mut scratch);
                for (e, v) in scratch.iter().enumerate() {
                    packed[(offset + e) * members + i] = *v;
                }
                offset += f.len;
            }
        }
        packed
    }
}

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
