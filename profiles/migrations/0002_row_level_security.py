from django.db import migrations

# Owner-only row-level security on every table of this app, the rule the other apps' policies call
# (memento_owner_visible, memories migration 0015). Written out here, not imported, so that no later code change
# alters this migration.
TABLES = ["profiles_usersettings", "profiles_profile", "profiles_profileentry", "profiles_historicalprofileentry",
          "profiles_reminder", "profiles_historicalreminder", "profiles_consolidationrun"]


def policy_sql(table: str) -> str:
    return f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY owner_only ON {table}
            USING (memento_owner_visible(owner_id)) WITH CHECK (memento_owner_visible(owner_id));
    """


def drop_sql(table: str) -> str:
    return f"""
        DROP POLICY IF EXISTS owner_only ON {table};
        ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
    """


class Migration(migrations.Migration):
    dependencies = [("profiles", "0001_initial"), ("memories", "0015_owner_visible")]

    operations = [migrations.RunSQL(policy_sql(table), reverse_sql=drop_sql(table)) for table in TABLES]
