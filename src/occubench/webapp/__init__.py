"""What the local web apps (expert review, play) share: the rules every request passes.

Host names and a cap on request bodies (the one statement of each, which ``serving``'s
endpoints apply too), security headers with no script allowed, form tokens with the
same-origin rule, and signed cookies (``_rules``'s docstring says what they trust and why).
"""

from occubench.webapp._rules import (
    HEADERS,
    TOKEN,
    AllowedHosts,
    BodyTooLarge,
    BoundedBody,
    FormError,
    FormGuard,
    SecurityHeaders,
    Signer,
    capped,
    guarded_app,
    host_allowed,
    host_name,
    refusal,
    same_origin,
    set_cookie,
)

__all__ = [
    "HEADERS",
    "TOKEN",
    "AllowedHosts",
    "BodyTooLarge",
    "BoundedBody",
    "FormError",
    "FormGuard",
    "SecurityHeaders",
    "Signer",
    "capped",
    "guarded_app",
    "host_allowed",
    "host_name",
    "refusal",
    "same_origin",
    "set_cookie",
]
