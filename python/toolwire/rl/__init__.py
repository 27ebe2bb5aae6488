"""RL rollouts, token in / token out.

:class:`Episode` keeps a multi-turn tool-use rollout as one token sequence: the ids the policy
sampled, unchanged and parsed from ids by the format's parser; the tool results in the model's own
envelope (:mod:`toolwire.rl.envelope`); a loss mask that is 1 only on sampled ids (0 on ids a
toolwire grammar forced, :func:`forced_token_mask`); per-turn issues as the invalid-action signal;
and :meth:`Episode.drift`, where re-rendering the messages would differ. :func:`score_batch`
parses and validates a whole rollout batch on several threads, :func:`count_batch` the same
handing back only counts (:mod:`toolwire.rl.batch`).
"""

from toolwire.rl.batch import BatchScorer, Counts, Scores, count_batch, score_batch
from toolwire.rl.envelope import FAMILY_ENVELOPES, NotPrefixStable
from toolwire.rl.episode import Drift, Episode, Sample, Turn
from toolwire.rl.forced import forced_token_mask
from toolwire.rl.tokenizer import ChatTokenizer

__all__ = [
    "FAMILY_ENVELOPES",
    "BatchScorer",
    "ChatTokenizer",
    "Counts",
    "Drift",
    "Episode",
    "NotPrefixStable",
    "Sample",
    "Scores",
    "Turn",
    "count_batch",
    "forced_token_mask",
    "score_batch",
]
