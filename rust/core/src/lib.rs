pub fn hello() {}
pub mod vocab;
