"""What the local web apps (expert review, play) share: the rules every request passes.

Host names, a cap on request bodies, security headers with no script allowed, form
tokens with the same-origin rule, and signed cookies (``_rules``'s docstring says what
they trust and why).
"""

from occubench.webapp._rules import (
    HEADERS,
    TOKEN,
    BodyTooLarge,
    BoundedBody,
    FormError,
    FormGuard,
    SecurityHeaders,
    Signer,
    guarded_app,
    refusal,
    same_origin,
    set_cookie,
)

__all__ = [
    "HEADERS",
    "TOKEN",
    "BodyTooLarge",
    "BoundedBody",
    "FormError",
    "FormGuard",
    "SecurityHeaders",
    "Signer",
    "guarded_app",
    "refusal",
    "same_origin",
    "set_cookie",
]
