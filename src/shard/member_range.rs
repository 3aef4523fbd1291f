//! A family restricted to a contiguous range of its members: member i of the range is
//! member `first + i` of the whole plan, a function of (seed, first + i) alone, so a shard
//! computes exactly the values the unsharded run computes for those members.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::plan::{MemberResult, RecordSpec, SharedStream, StepGrid};

/// Members `range` of `family`, as a family of `range.len()` members.
#[derive(Debug, Clone, Copy)]
pub struct MemberRange<'a, F> {
    family: &'a F,
    first: usize,
    count: usize,
}

impl<'a, F: Family> MemberRange<'a, F> {
    /// Members `range` of `family`; the range must be non-empty and within the plan.
    pub fn new(family: &'a F, range: Range<usize>) -> Result<Self> {
        if range.is_empty() || range.end > family.member_count() {
            return Err(Error::invalid(
                "shard",
                format!(
                    "members {}..{} are not a non-empty range of the plan's {} members",
                    range.start,
                    range.end,
                    family.member_count()
                ),
            ));
        }
        Ok(MemberRange {
            family,
            first: range.start,
            count: range.len(),
        })
    }

    /// The index in the whole plan of the range's first member.
    pub fn first(&self) -> usize {
        self.first
    }
}

impl<F: Family> Family for MemberRange<'_, F> {
    type Member = F::Member;
    type Kernel = F::Kernel;
    type Fast = F::Fast;

    fn name(&self) -> &'static str {
        self.family.name()
    }

    fn method_label(&self) -> String {
        self.family.method_label()
    }

    fn grid(&self) -> &StepGrid {
        self.family.grid()
    }

    fn member_count(&self) -> usize {
        self.count
    }

    fn states(&self) -> usize {
        self.family.states()
    }

    fn with_member_count(&self, count: usize) -> Result<Self> {
        MemberRange::new(self.family, self.first..self.first + count.min(self.count))
    }

    fn member(&self, index: usize) -> Result<F::Member> {
        self.family.member(self.first + index)
    }

    fn record_spec(&self) -> &RecordSpec {
        self.family.record_spec()
    }

    fn describe(&self) -> serde_json::Map<String, serde_json::Value> {
        self.family.describe()
    }

    fn record_start(&self, member: &F::Member, out: &mut MemberResult) {
        self.family.record_start(member, out)
    }

    fn reference(&self, member: &F::Member) -> Result<MemberResult> {
        self.family.reference(member)
    }

    fn shared_stream(&self) -> &SharedStream {
        self.family.shared_stream()
    }

    fn check_stream(&self) -> Result<()> {
        self.family.check_stream()
    }

    fn gpu_kernel(&self) -> Option<&F::Kernel> {
        self.family.gpu_kernel()
    }

    fn fast_engine(&self) -> Option<&F::Fast> {
        self.family.fast_engine()
    }

    fn engine_index(&self, index: usize) -> usize {
        self.family.engine_index(self.first + index)
    }
}
