from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from agent.acpc.gamefiles import load_game
from agent.data import game_path
from dealer.logfile import format_chips
from evaluation.logtool import LogError, main, read_transactions, verify_lines
from tests.support import LOGS, REFERENCE_LOGS

NL2 = "holdem.nolimit.2p.reverse_blinds.game"


@pytest.mark.parametrize(("log", "game"), sorted(REFERENCE_LOGS.items()))
def test_verify_passes_on_every_reference_log(
    log: str, game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    hands = (LOGS / log).read_text().split("\n", 1)[0].split()[4]  # the header's count
    assert main(["verify", game, str(LOGS / log)]) == 0
    assert f"OK ({hands} hands, byte-identical)" in capsys.readouterr().out


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "edited.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_one_changed_chip_amount_fails_with_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (LOGS / "nl1000.log").read_text().splitlines()
    assert lines[6] == "STATE:2:f:4d6c|QsJh:50|-50:P1|P2"
    lines[6] = "STATE:2:f:4d6c|QsJh:51|-50:P1|P2"
    assert main(["verify", NL2, str(_write(tmp_path, lines))]) == 1
    err = capsys.readouterr().err
    assert "edited.log:7: STATE line differs" in err
    assert "'STATE:2:f:4d6c|QsJh:50|-50:P1|P2'" in err


def test_short_stack_limit_raises_verify_and_a_changed_chip_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference's short-stack limit raises (tests/agent/acpc/test_limit_short_raise.py
    derives every state): the reference's log verifies; one chip changed is named."""
    log = LOGS / "limit_short_raise.log"
    assert main(["verify", "lim4p_stack.game", str(log)]) == 0
    assert "OK (8 hands, byte-identical)" in capsys.readouterr().out
    lines = log.read_text().splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("STATE:2:"))
    lines[i] = lines[i].replace(":-35|105|-35|-40:", ":-35|105|-35|-41:")
    assert main(["verify", "lim4p_stack.game", str(_write(tmp_path, lines))]) == 1
    assert f"edited.log:{i + 1}: STATE line differs" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line_no", "old", "new", "reason"),
    [
        (1005, "SCORE:359130", "SCORE:359131", "1005: SCORE line differs"),
        (5, "/r7012c", "/r7013c", "5: STATE line differs"),  # betting no longer fits values
        (5, "r7012c", "r7012", "5: the betting does not end the hand"),
        (5, "r3023r6694c", "r3023r3024c", "5: illegal betting"),
        (6, "9h6s|3d3h", "9h6s|3d3c", "6: STATE line differs"),  # a card changed
        (1, "42", "43", "1: header differs"),
    ],
)
def test_each_kind_of_edit_is_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line_no: int, old: str, new: str,
    reason: str,
) -> None:
    lines = (LOGS / "nl1000.log").read_text().splitlines()
    assert old in lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(old, new, 1)
    if line_no == 1:
        # a different seed re-deals every hand: the first STATE line differs instead
        reason = "5: STATE line differs"
    assert main(["verify", NL2, str(_write(tmp_path, lines))]) == 1
    assert reason in capsys.readouterr().err


def test_truncated_and_extended_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (LOGS / "leduc_1000.log").read_text().splitlines()
    assert main(["verify", "leduc.limit.2p.game", str(_write(tmp_path, lines[:-1]))]) == 1
    assert "1005: SCORE line differs" in capsys.readouterr().err
    assert main(["verify", "leduc.limit.2p.game", str(_write(tmp_path, [*lines, "x"]))]) == 1
    assert "1006: unexpected text after SCORE" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "expected '# name/game/hands/seed ...', got an empty file"),
        (b"hello\n", "expected '# name/game/hands/seed <match> <game> <hands> <seed>'"),
        (b"# name/game/hands/seed a b 10 1\n#--t_response x\n", "expected '#--t_response <ms>'"),
        (b"\xff\xfe", "bad.log:1: expected a dealer log (ASCII), got byte 0xff at "
         "column 1"),
    ],
)
def test_malformed_logs_get_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    assert main(["verify", "leduc.limit.2p.game", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("acpc-log: error: ")
    assert message in err
    assert "Traceback" not in err


def test_missing_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["verify", "leduc.limit.2p.game", str(tmp_path / "none.log")]) == 1
    assert "could not read log" in capsys.readouterr().err
    assert main(["verify", "nope.game", str(LOGS / "leduc_1000.log")]) == 1
    assert "could not open game definition 'nope.game'" in capsys.readouterr().err


def test_console_script_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "evaluation.logtool", "verify", "kuhn.limit.3p.game",
         str(LOGS / "kuhn3p_1000.log")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "byte-identical" in out.stdout


def test_format_chips() -> None:
    assert format_chips(-100.0) == "-100"
    assert format_chips(4662.5) == "4662.5"
    assert format_chips(313141 + 2 / 3) == "313141.666667"
    assert format_chips(-0.0) == "0"
    assert format_chips(0.0) == "0"
    assert format_chips(1e-7) == "0"
    assert format_chips(-1e-7) == "0"


# ----------------------------------------------------------- bounds (issue 28, item 2)

HUGE = "9" * 5000
LEDUC = (LOGS / "leduc_1000.log").read_text().splitlines()


@pytest.mark.parametrize(
    ("command", "edit", "needle"),
    [
        # each of these used to escape as the int conversion limit's ValueError (traceback)
        ("verify", (0, f"# name/game/hands/seed leduc_1000 leduc.limit.2p.game {HUGE} 7"),
         "bad.log:1: expected hands of at most 20 digits"),
        ("verify", (1, f"#--t_response {HUGE}"), "bad.log:2: expected t_response of at most"),
        ("allin-ev", (5, f"STATE:{HUGE}:rc/cc:Ah|Qs/Ks:3|-3:P2|P1"),
         "bad.log:6: expected the hand number of at most 20 digits"),
        ("phh", (5, f"STATE:{HUGE}:rc/cc:Ah|Qs/Ks:3|-3:P2|P1"),
         "bad.log:6: expected STATE:hand:betting:cards:values:names (a hand number of at "
         "most 20 digits)"),
        ("allin-ev", (5, "STATE:1:rc/cc:Ah|Qs/Ks:inf|-inf:P2|P1"), "expected finite values"),
        ("verify", (5, "x" * ((1 << 20) + 1)), "bad.log:6: expected a dealer log with "
         "lines of at most 1,048,576 bytes, got a longer line"),
    ],
)
def test_hostile_log_lines_are_one_short_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
    edit: tuple[int, str], needle: str,
) -> None:
    lines = list(LEDUC)
    lines[edit[0]] = edit[1]
    path = tmp_path / "bad.log"
    path.write_text("\n".join(lines) + "\n")
    game = "holdem.limit.2p.reverse_blinds.game" if command == "phh" else "leduc.limit.2p.game"
    assert main([command, game, str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("acpc-log: error: ") and err.count("\n") == 1, err[:300]
    assert needle in err and len(err) < 400, err[:300]


def test_a_mismatch_quotes_long_lines_as_an_excerpt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    lines = list(LEDUC)
    lines[6] = f"STATE:{HUGE}:rc/cc:Ah|Qs/Ks:3|-3:P2|P1"  # a crash on main (int() of it)
    path = tmp_path / "bad.log"
    path.write_text("\n".join(lines) + "\n")
    assert main(["verify", "leduc.limit.2p.game", str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad.log:7: expected the STATE line of hand 2" in err
    assert "(5,032 characters)" in err and len(err) < 800


def test_transaction_files_are_bounded(tmp_path: Path) -> None:
    tlog = tmp_path / "m.tlog"
    tlog.write_text(f"c {HUGE} 1 2\n")
    with pytest.raises(LogError, match=r"m\.tlog:1: expected '<action> <hand> <sent> "
                       r"<received>' \(a hand of at most 20 digits\)"):
        read_transactions(tlog, load_game("leduc.limit.2p.game"))
    tlog.write_bytes(b"c 1 1 2\n\xff\n")
    with pytest.raises(LogError, match=r"m\.tlog:2: expected a transaction file \(ASCII\)"):
        read_transactions(tlog, load_game("leduc.limit.2p.game"))


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ('{"hand": 0, "betting": "", "real": ' + "[" * 3000 + "]" * 3000 + "}",
         "t.jsonl:1: expected a JSON trace record nested at most 32 levels deep"),
        ('{"hand": ' + HUGE + ', "betting": "", "real": "c"}',
         "t.jsonl:1: expected a JSON trace record"),
        ('{"hand": 1e999, "betting": "", "real": "c"}', "a whole number in 0..99999"),
        ('{"hand": -1, "betting": "", "real": "c"}', "a whole number in 0..99999"),
        ('{"event": "result", "hand": "x", "betting": "' + "c" * 3000 + '"}',
         "expected a result record with hand"),
    ],
)
def test_hostile_trace_records_are_one_short_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: str, needle: str,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(record + "\n")
    assert main(["phh", "holdem.nolimit.2p.reverse_blinds.game", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("acpc-log: error: ") and err.count("\n") == 1, err[:300]
    assert needle in err and len(err) < 400, err[:300]


def test_verify_streams_the_log() -> None:
    # The log is read as it is checked: an endless stream after a good log stops at its
    # first extra line (on main the whole file was read into a list first).
    game = load_game("leduc.limit.2p.game")
    endless = itertools.chain(LEDUC, itertools.repeat("junk"))
    result = verify_lines(game, endless, "endless")
    assert result.mismatch is not None and result.hands == 1000
    assert result.mismatch.line_no == len(LEDUC) + 1
    assert result.mismatch.reason == "unexpected text after SCORE"
    assert verify_lines(game, iter(LEDUC), "good").ok


def test_a_game_file_with_a_5000_digit_number_is_one_line_for_the_dealer_and_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # acpc-dealer and acpc-log verify used to crash with the int conversion limit's ValueError
    from dealer.cli import main as dealer_main

    text = game_path("leduc.limit.2p.game").read_text()
    game = tmp_path / "big.game"
    game.write_text(text.replace("blind = 1 1", f"blind = 1 1{HUGE}"))
    assert main(["verify", str(game), str(LOGS / "leduc_1000.log")]) == 1
    assert dealer_main(["m", str(game), "10", "1", "a", "b"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("big.game:" in e and "of at most 20 digits" in e
                                 and len(e) < 300 for e in err), err
