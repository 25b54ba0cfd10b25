"""``acpc-match --variants FILE.toml`` is an input: bounded before parsing, every setting
checked like its command-line flag, every error one short line naming the file and key
(issue 28, issue 32). No match is played here."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import cli as matchcli
from evaluation.match.schedule import MAX_GROUPS, make_groups
from evaluation.match.variants import (
    MAX_TOML_BYTES,
    MAX_TOML_DEPTH,
    RUN_SETTINGS,
    VariantError,
    load_toml,
    parse_variant,
)

VARIANTS = '[variants]\na = "builtin:call"\nb = "builtin:fold"\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "v.toml"
    path.write_text(text, encoding="utf-8")
    return path


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """Exit status and stderr lines of ``acpc-match ARGS --quiet``."""
    status = matchcli.main([*args, "--quiet"])
    return status, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(("line", "message"), [
    ('hands = "many"', "hands: expected an integer 1..4294967295, got 'many'"),
    ('workers = "two"', "workers: expected an integer 1..1024, got 'two'"),
    ('seed = "x"', "seed: expected an integer 0..9223372036854775807, got 'x'"),
    ("seed = {}", "seed: expected an integer 0..9223372036854775807, got {}"),
    ('seed = ""', "seed: expected an integer 0..9223372036854775807, got ''"),
])
def test_a_bad_setting_is_one_line_and_exit_1(tmp_path: Path, line: str, message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Tracebacks on main (ValueError/TypeError from int() escaped acpc-match)."""
    path = write(tmp_path, f"{line}\n{VARIANTS}")
    status, err = cli(["--variants", str(path), "--transport", "inproc",
                       "--run-dir", str(tmp_path / "run")], capsys)
    assert (status, err) == (1, [f"acpc-match: error: {path}: {message}"])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("line", "message"), [
    ('allin_ev = "false"', "allin_ev: expected true or false, got 'false'"),  # was: on
    ("allin_ev = 1", "allin_ev: expected true or false, got 1"),
    ("matches = 2.5", "matches: expected an integer 1..100000, got 2.5"),  # was: 2 matches
    ("hands = true", "hands: expected an integer 1..4294967295, got True"),
    ('hands = "5"', "hands: expected an integer 1..4294967295, got '5'"),
    ("seed = inf", "seed: expected an integer 0..9223372036854775807, got inf"),
    ("transport = 5", "transport: expected one of tcp, inproc, got 5"),
    ("game = []", "game: expected a game file or bundled game name of 1..4096 "
                  "characters, got []"),
    ('[variants.c]\nstrategy = "builtin:call"\nseed = "7"',
     "[variants.c]: seed: expected an integer 0..9223372036854775807, got '7'"),
    ("[variants.c]\nstrategy = \"builtin:call\"\nseed = inf",  # OverflowError on main
     "[variants.c]: seed: expected an integer 0..9223372036854775807, got inf"),
    ('[variants.c]\nstrategy = "x.strat"\nmapping = 5',
     "[variants.c]: mapping: expected text of 1..4096 characters, got 5"),
])
def test_a_toml_value_must_have_the_toml_type(tmp_path: Path, line: str,
                                              message: str) -> None:
    """A string is not a bool, a float is not an int: main took them silently (or crashed)."""
    path = write(tmp_path, f"{VARIANTS}{line}\n" if line.startswith("[")
                 else f"{line}\n{VARIANTS}")
    with pytest.raises(VariantError) as info:
        load_toml(path)
    assert str(info.value) == f"{path}: {message}"


@pytest.mark.parametrize(("key", "toml", "text"), [
    ("hands", "0", "0"), ("hands", "4294967296", "4294967296"), ("matches", "100001", "100001"),
    ("workers", "0", "0"), ("seed", "-1", "-1"), ("seed", "9223372036854775808", "x"),
    ("transport", '"udp"', "udp"), ("unit", '"deal"', "deal"),
])
def test_the_file_and_the_flag_say_the_same(tmp_path: Path, key: str, toml: str, text: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """One validation: the TOML message is the flag's (exit 1 for the file's content, 2 for
    a usage error). On main ``--seed -1`` exited 1 with another message."""
    path = write(tmp_path, f"{key} = {toml}\n{VARIANTS}")
    with pytest.raises(VariantError) as info:
        load_toml(path)
    expected = str(info.value).removeprefix(f"{path}: {key}: expected ").split(", got ")[0]
    assert expected == RUN_SETTINGS[key].expected
    status, err = cli([f"--{key}", text, "-v", "a=builtin:call", "-v", "b=builtin:fold"],
                      capsys)
    assert status == 2
    assert err[-1] == f"acpc-match: error: argument --{key}: expected {expected}, got {text!r}"


def test_nesting_is_bounded_before_parsing(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """RecursionError in load_toml on main; brackets in strings and comments do not count."""
    deep = write(tmp_path, "seed = " + "[" * 3000 + "]" * 3000 + "\n" + VARIANTS)
    status, err = cli(["--variants", str(deep)], capsys)
    assert (status, err) == (1, [f"acpc-match: error: {deep}: expected arrays and inline "
                                 f"tables nested at most {MAX_TOML_DEPTH} deep, got 3000"])
    over = MAX_TOML_DEPTH + 1
    with pytest.raises(VariantError, match=f"got {over}$"):
        load_toml(write(tmp_path, "x = " + "[" * over + "]" * over + "\n" + VARIANTS))
    brackets = "[{" * 40
    text = (f'# {brackets}\n[variants.a]\nstrategy = "builtin:call"\n'
            f'[variants.b]\ncmd = ["./agent.sh", "{brackets}", \'{brackets}\', """{brackets}"""]\n')
    variants, _ = load_toml(write(tmp_path, text))
    assert variants[1].cmd[1:] == (brackets,) * 3


def test_the_file_size_is_bounded(tmp_path: Path) -> None:
    path = write(tmp_path, VARIANTS + "#" * MAX_TOML_BYTES + "\n")
    with pytest.raises(VariantError, match=f"at most {MAX_TOML_BYTES:,} bytes, got more$"):
        load_toml(path)


def test_a_huge_integer_is_one_line(tmp_path: Path) -> None:
    """ValueError (the interpreter's 4,300-digit limit) escaped tomllib on main."""
    path = write(tmp_path, "hands = " + "9" * 5000 + "\n" + VARIANTS)
    with pytest.raises(VariantError, match="expected integers of at most 4,300 digits"):
        load_toml(path)


@pytest.mark.parametrize(("line", "shown"), [
    ('game = "{x}"', "game: expected a game file or bundled game name of 1..4096 "),
    ('seed = "{x}"', "seed: expected an integer 0..9223372036854775807, got "),
    ('[variants.c]\nstrategy = "{x}"', "[variants.c]: strategy: expected text of 1..4096 "),
    ('[variants.c]\nstrategy = "x.strat"\nmapping = "{x}"', "[variants.c]: mapping: "),
    ('[variants.{x}]\nstrategy = "builtin:call"', "[variants]: expected a name of letters"),
])
@pytest.mark.parametrize("size", [5000, 100_000])
def test_long_values_are_quoted_short(tmp_path: Path, line: str, shown: str, size: int,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """main: 'File name too long' errors and messages echoing the whole value."""
    text = line.replace("{x}", "9" * size)
    path = write(tmp_path, f"{VARIANTS}{text}\n" if text.startswith("[")
                 else f"{text}\n{VARIANTS}")
    status, err = cli(["--variants", str(path)], capsys)
    assert status == 1 and len(err) == 1, err
    assert err[0].startswith(f"acpc-match: error: {path}: {shown}")
    assert err[0].endswith(f"'{'9' * 80}'... ({size:,} characters)")


def test_a_long_command_line_value_is_quoted_short() -> None:
    with pytest.raises(VariantError) as info:
        parse_variant("a=x.strat,seed=" + "9" * 5000)
    assert str(info.value).endswith(f"got '{'9' * 80}'... (5,000 characters)")


def test_a_file_without_variants_is_an_error(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """main played the default hold'em setup for a file that names no variant."""
    path = write(tmp_path, "hands = 5\n")
    status, err = cli(["--variants", str(path), "--game", "missing.game"], capsys)
    assert (status, err) == (1, [f"acpc-match: error: {path}: expected at least one "
                                 "[variants.NAME] table (or -v NAME=SPEC), got none (the "
                                 "default setup is played only without --variants)"])
    status, err = cli(["--variants", str(path), "--estimator", "exact-agents"], capsys)
    assert status == 1 and "expected at least one [variants.NAME] table" in err[-1]
    # settings from the file, variants from the command line: fine
    _, settings = load_toml(path)
    assert settings == {"hands": 5}


def test_round_robins_are_bounded() -> None:
    """main listed every group first (200 variants heads-up: 19,900 groups)."""
    variants = [parse_variant(f"v{i}=builtin:call") for i in range(200)]
    with pytest.raises(VariantError, match=f"at most {MAX_GROUPS:,} groups, got 19,900"):
        make_groups(variants, 2)
    assert len(make_groups(variants[:141], 2)) == 9870
