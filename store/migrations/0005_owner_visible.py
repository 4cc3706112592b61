from django.db import migrations

# This app's owner-only policies call memento_owner_visible (memories migration 0015: one rule, which the planner
# does not count twice with a query's own owner condition). Written out here, not imported, so that no later code
# change alters this migration.
ROLE = "memento_maintenance"
OLD_RULE = (f"(current_setting('memento.rls_bypass', true) = 'on' AND pg_has_role(current_user, '{ROLE}', 'MEMBER')) "
            f"OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint")
TABLES = ["store_itemvector"]


def policy(table: str, rule: str) -> str:
    return f"ALTER POLICY owner_only ON {table} USING ({rule}) WITH CHECK ({rule});"


class Migration(migrations.Migration):
    dependencies = [("store", "0004_maintenance_role_bypass"), ("memories", "0015_owner_visible")]

    operations = [
        migrations.RunSQL(policy(table, "memento_owner_visible(owner_id)"), reverse_sql=policy(table, OLD_RULE))
        for table in TABLES
    ]
