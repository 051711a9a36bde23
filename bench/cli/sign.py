"""The commands that say who handed results in (:mod:`bench.results.signing`): ``bench keygen``
(a contributor's ed25519 key pair, made once) and ``bench sign`` (sign every sealed cell of a
results folder with it). The maintainer names the public keys in a keyring given to
``bench leaderboard --keys``.

Example:
    $ bench keygen ~/.bench/me.key
    $ bench sign --results results --key ~/.bench/me.key
"""

from __future__ import annotations

from bench.cli.common import UsageError, check_folder


def cmd_keygen(args) -> str:
    """``bench keygen FILE``: write a private key and ``FILE.pub``; returns the key id."""
    from bench.results.signing import SignatureError, generate_key

    try:
        kid = generate_key(args.file)
    except (SignatureError, OSError) as e:
        raise UsageError(str(e)) from None
    return (f"wrote {args.file} (private: keep it to yourself) and {args.file}.pub\n"
            f"public key: {kid}\n  give it to the leaderboard's maintainer, who lists it in "
            "their keyring (`bench leaderboard --keys`)\n")


def cmd_sign(args) -> str:
    """``bench sign``: sign every sound, sealed cell of a results folder."""
    from bench.results import layout
    from bench.results.signing import SignatureError, load_private_key, public_id, sign_results

    check_folder(args.results, "--results")
    if not layout.cells_dir(args.results).is_dir():
        raise UsageError(f"{args.results}: not a results folder (no {layout.CELLS}/ inside)")
    try:
        key = load_private_key(args.key)
    except SignatureError as e:
        raise UsageError(str(e)) from None
    kid = public_id(key)
    signed, skipped = sign_results(args.results, key)
    lines = [f"signed {signed} cell(s) of {args.results} with {kid}"]
    lines += [f"  not signed: {s}" for s in skipped]
    return "\n".join(lines) + "\n"


def add_keygen_parser(sub) -> None:
    """``bench keygen``: a new ed25519 key pair."""
    kg = sub.add_parser("keygen", help="make an ed25519 key pair to sign your results with "
                        "(`bench sign`)")
    kg.add_argument("file", help="private key file to write (its public key: FILE.pub)")
    kg.set_defaults(func=cmd_keygen)


def add_sign_parser(sub) -> None:
    """``bench sign``: sign a results folder's cells."""
    sg = sub.add_parser("sign", help="sign every sealed cell of a results folder with your key "
                        "(the leaderboard shows the verified signer)")
    sg.add_argument("--results", default="results")
    sg.add_argument("--key", required=True, metavar="FILE",
                    help="your private key (`bench keygen FILE` makes one)")
    sg.set_defaults(func=cmd_sign)
