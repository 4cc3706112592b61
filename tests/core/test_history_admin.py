"""The admin's history tables: headers are the fields' names as people read them, cells the fields' displays."""

import re

from django.urls import reverse

from memories import services


def test_history_table_headers_and_cells_read_like_the_admins_lists(admin_client, user):
    memory = services.memory_create(owner=user, content="Runs a marathon every spring", actor=user).memory
    memory = services.memory_update(memory=memory, data={"content": "Runs a marathon every autumn"}, actor=user)
    services.memory_soft_delete(memory=memory, actor=user, reason="no longer runs")
    page = admin_client.get(reverse("admin:memories_memory_history", args=[memory.pk])).content.decode()

    head = re.search(r'<table id="change-history".*?<thead>(.*?)</thead>', page, re.S).group(1)
    assert re.findall(r"<th [^>]*>(.*?)</th>", head) == [
        "Object", "History action", "Version", "Is active", "Date/time", "Change", "Changed by", "Reason",
        "What changed",
    ]
    assert re.findall(r'<td class="field-history_action">(.*?)</td>', page) == ["Soft delete", "Update", "Create"]
    assert re.findall(r'<td class="field-version">(.*?)</td>', page) == ["3", "2", "1"]
    assert re.findall(r'<td class="field-is_active"><img src="[^"]*/icon-(yes|no)\.svg" alt="(\w+)">', page) == [
        ("no", "False"), ("yes", "True"), ("yes", "True")]
    assert "no longer runs" in page and "3 versions" in page


def test_what_changed_reads_json_and_lists_as_pairs_and_leaves_bookkeeping_out(admin_client, user):
    memory = services.memory_create(owner=user, content="Lives in Lisbon", actor=user).memory
    services.memory_update(memory=memory, data={"tags": ["home", "city"], "metadata": {"since": 2019}}, actor=user)
    page = admin_client.get(reverse("admin:memories_memory_history", args=[memory.pk])).content.decode()
    changed = re.findall(r"<li><strong>(.*?):</strong> (.*?) &rarr; (.*?)</li>", page)
    assert sorted(changed) == [("Metadata", "—", "since: 2019"), ("Tags", "—", "home, city")]
    assert "{&#x27;" not in page and "[]" not in page
