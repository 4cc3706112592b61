"""When a memory expires: past `expires_at`, or past its TTL. The TTL rule is defined once here, for the ORM
(`ttl_deadline`) and for statements written by hand (`ttl_deadline_sql`: the near-duplicate lookup, the search
snapshot), from one SQL template."""

from django.db import models
from django.db.models import F, Func, Q
from django.db.models.functions import Now
from django.db.models.lookups import LessThanOrEqual

# The longest TTL a write may set: 100 years (PostgreSQL cannot add much larger intervals to a date, and every
# list computes updated_at + ttl).
MAX_TTL_MINUTES = 100 * 365 * 24 * 60

# A memory with `ttl_minutes` expires that long after its last write or read (a read refreshes the TTL by setting
# `accessed_at`, which is not versioned, so a refresh is no history row).
TTL_DEADLINE = "greatest({updated_at}, {accessed_at}) + {ttl_minutes} * interval '1 minute'"
_TTL_COLUMNS = ("updated_at", "accessed_at", "ttl_minutes")


def ttl_deadline_sql(table: str = "") -> str:
    """The TTL deadline as SQL, its columns read from `table` (an alias; none: unqualified)."""
    return TTL_DEADLINE.format(**{column: f"{table}.{column}" if table else column for column in _TTL_COLUMNS})


class _TTLDeadline(Func):
    output_field = models.DateTimeField()

    def __init__(self):
        super().__init__(*(F(column) for column in _TTL_COLUMNS))

    def as_sql(self, compiler, connection, **extra_context):
        columns, params = {}, []
        for name, expression in zip(_TTL_COLUMNS, self.get_source_expressions(), strict=True):
            sql, column_params = compiler.compile(expression)
            columns[name] = sql
            params += column_params
        return TTL_DEADLINE.format(**columns), params


def ttl_deadline() -> Func:
    """When a memory with a TTL expires (TTL_DEADLINE), as an ORM expression."""
    return _TTLDeadline()


def expired_q() -> Q:
    """Memories that are past `expires_at` or past their TTL (NULLs are never expired)."""
    return (Q(expires_at__isnull=False) & Q(expires_at__lte=Now())) | (
        Q(ttl_minutes__isnull=False) & Q(LessThanOrEqual(ttl_deadline(), Now()))
    )
