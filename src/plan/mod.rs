//! What every plan is made of: plain data describing one run — the time grid, the values
//! shared by all members, what each member records, the memory budget. Each family's own
//! plan lives in its wing (`crate::families`) and is built from these; backends execute any
//! of them through [`crate::kernels::Family`], and nothing here needs an adapter.

pub mod budget;
pub mod energy_balance;
pub mod gradient_resources;
pub mod grid;
pub mod record;
pub mod result_block;
pub mod result_writer;
pub mod stream;

pub use budget::{MemoryBudget, format_bytes};
pub use energy_balance::{ENERGY_TOTALS, EnergyBalance, energy_balance_channels};
pub use gradient_resources::{DescentSizes, ProblemEstimate, ProblemSizes, Setting};
pub use grid::{StepGrid, step_count};
pub use record::{Channel, MemberResult, RecordSpec, Recording, ResultSink};
pub use result_block::ResultBlock;
pub use result_writer::ResultWriter;
pub use stream::SharedStream;
