"""Public domains and integer encoding of the tree learners: the kit's, re-exported.

The module moved below the families (`jostle.learnerkit.encoding`), where the rule lists and
the estimator base use it too; this name stays for the callers that import it from here.
"""

from jostle.learnerkit.encoding import (Domain, EncodedDomains, NumericBins, describe_domains,  # noqa: F401
                                        encode_categories, encode_features)

__all__ = ["Domain", "EncodedDomains", "NumericBins", "describe_domains", "encode_categories", "encode_features"]
