"""How a finding and check's note name autotune configs (analysis/autotune.configs_text): what the configs
share once, the rest as one tuple each, so 18 configs of 7 parameters read as one line, not a page."""

from triton_lens.analysis.autotune import configs_text


def test_up_to_two_configs_read_as_written():
    assert configs_text(["BLOCK=256"]) == "BLOCK=256"
    assert (
        configs_text(["BLOCK=64, num_warps=4", "BLOCK=128, num_warps=8"])
        == "BLOCK=64, num_warps=4; BLOCK=128, num_warps=8"
    )


def test_more_say_what_they_share_once_and_the_rest_as_tuples():
    configs = [
        "BLOCK_M=16, BLOCK_K=128, SPLIT_K=4, num_warps=4",
        "BLOCK_M=16, BLOCK_K=128, SPLIT_K=2, num_warps=4",
        "BLOCK_M=16, BLOCK_K=256, SPLIT_K=1, num_warps=4",
    ]
    assert configs_text(configs) == "BLOCK_M=16, num_warps=4 and (BLOCK_K, SPLIT_K) = (128, 4), (128, 2), (256, 1)"
    assert configs_text(["BLOCK=64", "BLOCK=128", "BLOCK=256"]) == "BLOCK = 64, 128, 256"


def test_a_key_only_some_configs_have_is_shown_as_missing_elsewhere():
    got = configs_text(["BLOCK=64", "BLOCK=64, num_stages=2", "BLOCK=128"])
    assert got == "(BLOCK, num_stages) = (64, -), (64, 2), (128, -)"


def test_labels_that_are_not_key_value_pairs_stay_as_written():
    assert configs_text(["a", "b", "c"]) == "a; b; c"


def test_past_the_limit_the_first_ones_and_how_many_more():
    configs = [f"BLOCK={b}, num_warps=4" for b in (16, 32, 64, 128, 256)]
    assert configs_text(configs, limit=3) == (
        "num_warps=4 and BLOCK = 16, 32, 64, and 2 more (--format json lists them)"
    )
