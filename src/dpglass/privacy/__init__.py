"""The trust core of dpglass: randomness, mechanisms, sensitivities, the ledger.

Nothing outside this package draws privacy noise.  Each mechanism is documented
in ``docs/privacy.md`` with what it releases, its guarantee and its argument.
"""
