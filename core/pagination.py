"""The API's page numbers, read strictly."""

import re

from rest_framework import pagination
from rest_framework.exceptions import NotFound


class PageNumberPagination(pagination.PageNumberPagination):
    """DRF's page-number pagination, except that `page` must be written in ASCII digits (or `last`): Django's
    Paginator reads it with `int()`, which also takes " 1", "\\n1" or "١", none of them the integer the schema
    promises, so schemathesis's negative-data check found such pages answered 200."""

    def get_page_number(self, request, paginator):
        page = super().get_page_number(request, paginator)
        if isinstance(page, str) and page not in self.last_page_strings and not re.fullmatch(r"[0-9]+", page):
            raise NotFound(self.invalid_page_message.format(page_number=page, message="That page number is not an "
                                                                                      "integer"))
        return page
