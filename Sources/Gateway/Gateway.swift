import Schema
