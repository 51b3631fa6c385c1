"""``dpglass audit``: an empirical epsilon lower bound for a mechanism or a DP estimator.

``dpglass audit --model laplace`` audits a mechanism of the catalogue
(:func:`dpglass.audit.cases.mechanism_cases`, also ``selection/<mechanism>``
for one rule-list selection step); ``dpglass audit --model dp-rule-list
--mechanism smooth-laplace`` audits a registered DP estimator trained on a
small seeded dataset (:func:`dpglass.audit.audit_learner`).  It prints the
claimed guarantee, the lower bound with its confidence and PASS or VIOLATION;
the exit status is 0 for PASS and 1 for VIOLATION.
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["add_parser", "run"]


def _plain(text: str) -> str:
    """Help text without reStructuredText roles and literals."""
    import re

    text = re.sub(r":(?:func|class|mod|meth):`([^`]+)`", r"\1", text)
    return text.replace("``", "")


def add_parser(subparsers) -> None:
    """Register the ``audit`` subcommand."""
    p = subparsers.add_parser(
        "audit",
        help="empirical privacy audit: epsilon lower bound of a mechanism or DP estimator, PASS/VIOLATION",
        description=_plain(__doc__.split("\n\n")[1]) if __doc__ else None,
    )
    p.add_argument("--model", help="a mechanism (see --list) or a registered DP estimator (see `dpglass models`)")
    p.add_argument("--mechanism", help="dp-rule-list: the selection mechanism (default errors-pf)")
    p.add_argument("--runs", type=int, help="samples (mechanisms) or trainings (estimators) per dataset")
    p.add_argument("--epsilon", type=float, help="the epsilon to audit (default 1 for mechanisms, 8 for estimators)")
    p.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: unpredictable)")
    p.add_argument("--list", action="store_true", help="list the auditable mechanisms and estimators")
    p.set_defaults(handler=run)


def _audit_data(seed: int = 0):
    """A small seeded dataset: few records, so that one record matters."""
    rng = np.random.default_rng(seed)
    X = (rng.random((24, 3)) < 0.5).astype(np.uint8)
    y = (X[:, 0] ^ (rng.random(24) < 0.15)).astype(np.uint8)
    return X, y


def run(args) -> int:
    from dpglass.audit.cases import mechanism_cases
    from dpglass.registry import REGISTRY, get_spec

    if args.list or not args.model:
        print("mechanisms:")
        for name, case in mechanism_cases().items():
            print(f"  {name:28s} claim ({case.guarantee}) eps={case.claim[0]:g} delta={case.claim[1]:g}")
        print("estimators:")
        for spec in REGISTRY.values():
            if spec.private:
                print(f"  {spec.name:28s} {spec.guarantee}")
        return 0
    if not 0 < args.confidence < 1:
        raise InvalidParameterError(f"--confidence must be in (0, 1); got {args.confidence}.")
    if args.runs is not None and args.runs < 4:
        raise InvalidParameterError(f"--runs must be at least 4; got {args.runs}.")

    cases = mechanism_cases(args.epsilon if args.epsilon is not None else 1.0)
    if args.model in cases:
        if args.mechanism:
            raise InvalidParameterError("--mechanism applies to dp-rule-list only.")
        case = cases[args.model]
        result = case.run(args.runs, confidence=args.confidence, rng=args.seed)
        print(f"mechanism: {case.name} ({case.guarantee})")
        print(f"pair: {case.pair}")
    else:
        from dpglass.audit.learners import audit_learner

        spec = get_spec(args.model)
        if not spec.private:
            raise InvalidParameterError(f"{args.model!r} is not a DP estimator: there is no claim to audit.")
        params = dict(spec.test_params)
        params["epsilon"] = args.epsilon if args.epsilon is not None else 8.0
        accepted = spec.cls().get_params()
        if args.mechanism:
            if "mechanism" not in accepted:
                raise InvalidParameterError(f"{args.model!r} has no 'mechanism' parameter.")
            params["mechanism"] = args.mechanism
        for name, value in (("max_length", 1), ("max_card", 1), ("min_support", 0.0)):
            if name in accepted:
                params[name] = value
        X, y = _audit_data()
        est = spec.make(**params)
        result = audit_learner(est, X, y, n_runs=args.runs or 2000, confidence=args.confidence, rng=args.seed)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
        print(f"estimator: {spec.name}({shown}) on {len(y)} seeded records")
        print(f"neighbour: {result.neighbour}")
    eps, delta = result.claim
    print(f"claimed: ({eps:g}, {delta:.3g})-DP")
    print(f"empirical lower bound: epsilon >= {result.epsilon_lower:.4f} with {args.confidence:.0%} confidence "
          f"({result.audit.n_samples if hasattr(result, 'audit') else result.n_samples:,} runs per dataset)")
    best = result.audit.best if hasattr(result, "audit") else result.best
    if best is not None:
        print(f"best event: {best.event} [{best.direction}]: {best.k_num} vs {best.k_den} of {best.n}")
    print(result.verdict)
    return 1 if result.violation else 0
