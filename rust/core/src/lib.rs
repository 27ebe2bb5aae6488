pub mod schema;

pub fn hello() {}
