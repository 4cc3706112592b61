from django.db import migrations

# The owner-only policies' rule, once, as a SQL function the planner inlines (LANGUAGE sql, STABLE, one expression),
# and every policy of this app rewritten to call it; the other apps' policies follow in their own migrations.
#
# Why the owner test is `int8eq(...)` and not `owner_id = ...`: every owner-scoped query also says
# `owner_id = <id>` itself (code-level scoping), and PostgreSQL multiplied the two equalities' selectivities, so it
# expected a user's ~900 rows to be ~8. With so few expected, reading all of them by the owner B-tree and sorting
# cost no more than reading (owner, created_at) in order and stopping at the page's 20: it picked either, by a
# hair, owner by owner (a list page 0.3 ms or 5 ms). A function call is estimated at a flat third, not as an
# equality, and costs the same per row (int8eq is what `=` on bigint calls; leakproof too). The bypass arm is the
# one migration 0010 wrote. Written out here, not imported, so that no later code change alters this migration.
ROLE = "memento_maintenance"
FUNCTION = f"""
CREATE OR REPLACE FUNCTION memento_owner_visible(owner bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT (current_setting('memento.rls_bypass', true) = 'on' AND pg_has_role(current_user, '{ROLE}', 'MEMBER'))
        OR int8eq(owner, nullif(current_setting('memento.user_id', true), '')::bigint)
$$;
"""
OLD_RULE = (f"(current_setting('memento.rls_bypass', true) = 'on' AND pg_has_role(current_user, '{ROLE}', 'MEMBER')) "
            f"OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint")
TABLES = ["memories_project", "memories_memory", "memories_memoryhistory", "memories_memoryevent",
          "memories_memorystamp"]


def policy(table: str, rule: str) -> str:
    return f"ALTER POLICY owner_only ON {table} USING ({rule}) WITH CHECK ({rule});"


class Migration(migrations.Migration):
    dependencies = [("memories", "0014_memory_row_stamps")]

    operations = [
        migrations.RunSQL(FUNCTION, reverse_sql="DROP FUNCTION memento_owner_visible(bigint);"),
        *(migrations.RunSQL(policy(table, "memento_owner_visible(owner_id)"), reverse_sql=policy(table, OLD_RULE))
          for table in TABLES),
    ]
